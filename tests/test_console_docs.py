"""Every ``$ attention-lab translate`` line the docs show prints what the page says it prints.

The pages call these "real outputs" of the bundled models; a model retrained or a feature added (a second pass for
common words, say) changes them. Each command of a ```console block is run in-process with the bundled model, and
its stdout and stderr lines, in the order they are written, must be the lines the page shows under it, in both editions.
"""

from __future__ import annotations

import contextlib
import io
import shlex
from pathlib import Path

import pytest
from fences import FENCE

from attention_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "$ attention-lab translate "


def shown_commands() -> dict[str, list[tuple[str, list[str]]]]:
    """Each translate command the docs show, with its shown output lines and where (page: line of the command)."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            if block["lang"] != "console":
                continue
            first_line = text[: block.start("body")].count("\n") + 1
            lines = block["body"].rstrip("\n").split("\n")
            for k, line in enumerate(lines):
                if not line.startswith(PROMPT):
                    continue
                output = []
                for following in lines[k + 1 :]:
                    if following.startswith("$ "):
                        break
                    output.append(following.rstrip())
                where = f"{page.relative_to(ROOT)}:{first_line + k}"
                found.setdefault(line[2:], []).append((where, output))
    return found


COMMANDS = shown_commands()


def test_the_docs_show_translate_commands_in_both_editions():
    pages = {where.split(":")[0] for shown in COMMANDS.values() for where, _ in shown}
    assert {"docs/cli.md", "docs/cli.en.md", "docs/guide/names.md", "docs/guide/names.en.md"} <= pages
    for command, shown in COMMANDS.items():
        outputs = {tuple(output) for _, output in shown}
        assert len(outputs) == 1, f"the editions show different outputs for {command}: {shown}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_translate_command_prints_what_the_docs_show(command, monkeypatch):
    monkeypatch.chdir(ROOT)  # the pages name the bundled models relative to the repository
    terminal = io.StringIO()  # stdout and stderr in the order they are written, as a terminal shows them
    with contextlib.redirect_stdout(terminal), contextlib.redirect_stderr(terminal):
        code = main(shlex.split(command)[1:])
    printed = [line.rstrip() for line in terminal.getvalue().rstrip("\n").split("\n")]
    where, shown = COMMANDS[command][0]
    assert printed == shown, f"{where}: the page shows {shown}, the command prints {printed}"
    assert code == (2 if shown and shown[0].startswith("error:") else 0)
