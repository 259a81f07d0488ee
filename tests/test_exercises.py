"""The exercises at the end of each theory page (docs/exercises/<page>.md, included with --8<--) check themselves.

Every ```python block inside a ``??? success "答案 Solution"`` block runs (one fresh namespace per file, cwd = the
repository root) and carries its own ``assert`` lines; a failure names the file, the exercise and the block.
"""

import contextlib
import io
import os
import re
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "docs" / "exercises"
THEORY = ROOT / "docs" / "theory"
PAGES = ("why", "steps", "scores", "qkv", "bahdanau-luong", "local", "masking", "decoding", "transformer")
HEADING = "## 练习 Exercises"
SOLUTION = re.compile(r'^\?\?\?\+? success "答案 Solution"\s*$')
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)


def exercises(text: str) -> list[tuple[str, str, list[str]]]:
    """``(title, statement, solutions)`` per ``### `` exercise; each solution is its block, dedented."""
    found = []
    for part in re.split(r"^### ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        lines = body.splitlines()
        statement, solutions, i = [], [], 0
        while i < len(lines):
            if SOLUTION.match(lines[i]):
                i += 1
                block = []
                while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                    block.append(lines[i])
                    i += 1
                solutions.append(textwrap.dedent("\n".join(block)))
            else:
                statement.append(lines[i])
                i += 1
        found.append((title.strip(), "\n".join(statement), solutions))
    return found


def python_blocks(solution: str) -> list[str]:
    return [m["body"] for m in FENCE.finditer(solution) if m["lang"] == "python"]


def test_every_theory_page_has_an_exercise_file():
    assert sorted(p.stem for p in EXERCISES.glob("*.md")) == sorted(PAGES)
    for page in PAGES:
        assert (THEORY / f"{page}.md").is_file(), page


@pytest.mark.parametrize("page", PAGES)
def test_snippet_fits_the_end_of_its_page(page):
    text = (EXERCISES / f"{page}.md").read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADING, "the snippet starts with its heading (no front matter)"
    headings = re.findall(r"^(#+) ", text, flags=re.M)
    assert headings.count("#") == 0 and headings.count("##") == 1, "one level-2 heading, exercises at level 3"
    found = exercises(text)
    assert 2 <= len(found) <= 4, f"{page}: {len(found)} exercises"
    for title, statement, solutions in found:
        assert statement.strip(), f"{page}: {title!r} has no question"
        assert len(solutions) == 1 and solutions[0].strip(), f"{page}: {title!r} needs one solution block"
        assert "```" not in statement, f"{page}: {title!r}: code belongs in the solution"
    assert any(python_blocks(s[0]) for _, _, s in found), f"{page}: no coding exercise"


@pytest.mark.parametrize("page", PAGES)
def test_snippet_renders(page):
    import markdown

    text = (EXERCISES / f"{page}.md").read_text(encoding="utf-8")
    html = markdown.markdown(text, extensions=["admonition", "attr_list", "pymdownx.details", "pymdownx.superfences",
                                               "pymdownx.arithmatex", "tables"],
                             extension_configs={"pymdownx.arithmatex": {"generic": True}})
    n = len(exercises(text))
    assert html.count('<details class="success">') == n
    assert html.count("<summary>答案 Solution</summary>") == n
    assert "???" not in html and "```" not in html
    assert html.count("<code") >= sum(len(python_blocks(s[0])) for _, _, s in exercises(text))


@pytest.mark.parametrize("page", PAGES)
def test_solutions_run_and_check_themselves(page):
    text = (EXERCISES / f"{page}.md").read_text(encoding="utf-8")
    namespace: dict = {"__name__": f"exercises_{page}"}
    grad, cwd = torch.is_grad_enabled(), os.getcwd()
    os.chdir(ROOT)
    try:
        number = 0
        for title, _, solutions in exercises(text):
            for code in python_blocks(solutions[0]):
                number += 1
                where = f"docs/exercises/{page}.md, block {number} ({title})"
                assert "assert" in code, f"{where}: a solution must check itself with assert"
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(code, where, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - reported with its place
                    pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
        assert number >= 1
    finally:
        os.chdir(cwd)
        torch.set_grad_enabled(grad)
