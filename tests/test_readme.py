"""The README's commands are the ones CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_ci_runs_the_readme_test_command_word_for_word():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for block in _bash_blocks(readme) for line in block.splitlines()]
    test_commands = [c for c in commands if "pytest" in c]
    assert test_commands, "README names no test command"
    for command in test_commands:
        assert command in [line.strip() for line in ci], f"CI does not run {command!r}"


def test_requirements_pin_the_cpu_torch_exactly():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    assert "torch==2.13.0" in [line.strip() for line in lines]


def test_the_readme_is_a_front_door_with_both_commands_on_its_first_screen():
    """At most 150 lines; both set-up commands in the first 60 (timings, options and measurements live in the docs)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, len(lines)
    first_screen = [line.strip() for line in lines[:60]]
    for command in ("pip install -r requirements.txt && python app.py",
                    "pip install -r requirements.txt && python -m pytest",
                    "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"):
        assert command in first_screen, command
    for page in ("docs/quickstart.en.md", "docs/cli.en.md", "docs/benchmarks.en.md", "CONTRIBUTING.md"):
        assert f"]({page}" in "\n".join(lines), page  # where what left the README went
