"""The exercises at the end of each theory page (docs/exercises/<page>.md, included with --8<--) check themselves.

Every ```python block inside a ``??? success "答案 Solution"`` block runs (one fresh namespace per file, cwd = the
repository root) and carries its own ``assert`` lines; a failure names the file, the exercise and the block.

The English edition (docs/exercises/<page>.en.md, included by docs/theory/<page>.en.md) has the same exercises with
``## Exercises`` and ``??? success "Solution"``; its python blocks are the Chinese file's code up to comments,
docstrings and printed labels (``same_program`` from tests/test_walkthrough.py: names, numbers, calls and data strings
must match), which must be English there. Its solutions run and check themselves too.
"""

import contextlib
import io
import os
import re
import textwrap
from pathlib import Path

import pytest
import torch
from fences import FENCE
from test_walkthrough import chinese_for_readers, same_program

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "docs" / "exercises"
THEORY = ROOT / "docs" / "theory"
PAGES = ("why", "steps", "scores", "qkv", "bahdanau-luong", "local", "masking", "decoding", "transformer",
         "alignment")
LANGS = ("zh", "en")
SUFFIX = {"zh": ".md", "en": ".en.md"}
HEADING = {"zh": "## 练习 Exercises", "en": "## Exercises"}
SUMMARY = {"zh": "答案 Solution", "en": "Solution"}
SOLUTION = {lang: re.compile(rf'^\?\?\?\+? success "{summary}"\s*$') for lang, summary in SUMMARY.items()}
CJK = re.compile(r"[\u4e00-\u9fff]")


def exercises(text: str, lang: str = "zh") -> list[tuple[str, str, list[str]]]:
    """``(title, statement, solutions)`` per ``### `` exercise; each solution is its block, dedented."""
    found = []
    for part in re.split(r"^### ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        lines = body.splitlines()
        statement, solutions, i = [], [], 0
        while i < len(lines):
            if SOLUTION[lang].match(lines[i]):
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


def snippet(page: str, lang: str) -> str:
    return (EXERCISES / f"{page}{SUFFIX[lang]}").read_text(encoding="utf-8")


def test_every_theory_page_has_an_exercise_file_in_both_languages():
    expected = sorted(page + SUFFIX[lang] for page in PAGES for lang in LANGS)
    assert sorted(p.name for p in EXERCISES.glob("*.md")) == expected
    for page in PAGES:
        for lang in LANGS:
            assert (THEORY / f"{page}{SUFFIX[lang]}").is_file(), (page, lang)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_each_theory_page_ends_with_its_own_languages_exercises(page, lang):
    lines = (THEORY / f"{page}{SUFFIX[lang]}").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert lines[-1] == f'--8<-- "docs/exercises/{page}{SUFFIX[lang]}"', (page, lang, lines[-1])
    assert sum('--8<-- "docs/exercises/' in line for line in lines) == 1


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_snippet_fits_the_end_of_its_page(page, lang):
    text = snippet(page, lang)
    assert text.splitlines()[0] == HEADING[lang], "the snippet starts with its heading (no front matter)"
    headings = re.findall(r"^(#+) ", text, flags=re.M)
    assert headings.count("#") == 0 and headings.count("##") == 1, "one level-2 heading, exercises at level 3"
    found = exercises(text, lang)
    assert 2 <= len(found) <= 4, f"{page}: {len(found)} exercises"
    for title, statement, solutions in found:
        assert statement.strip(), f"{page}: {title!r} has no question"
        assert len(solutions) == 1 and solutions[0].strip(), f"{page}: {title!r} needs one solution block"
        assert "```" not in statement, f"{page}: {title!r}: code belongs in the solution"
        if lang == "en":
            assert not CJK.search(title), f"{page}.en.md: {title!r} is not an English heading"
    assert any(python_blocks(s[0]) for _, _, s in found), f"{page}: no coding exercise"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_snippet_renders(page, lang):
    import markdown

    text = snippet(page, lang)
    html = markdown.markdown(text, extensions=["admonition", "attr_list", "pymdownx.details", "pymdownx.superfences",
                                               "pymdownx.arithmatex", "tables"],
                             extension_configs={"pymdownx.arithmatex": {"generic": True}})
    found = exercises(text, lang)
    assert html.count('<details class="success">') == len(found)
    assert html.count(f"<summary>{SUMMARY[lang]}</summary>") == len(found)
    assert "???" not in html and "```" not in html
    assert html.count("<code") >= sum(len(python_blocks(s[0])) for _, _, s in found)


@pytest.mark.parametrize("page", PAGES)
def test_english_exercises_are_the_chinese_ones(page):
    """Same exercises, numbered alike, every python block the Chinese one's code (comments and labels translated)."""
    zh, en = exercises(snippet(page, "zh"), "zh"), exercises(snippet(page, "en"), "en")
    assert len(en) == len(zh), page
    for (zh_title, _, zh_solutions), (en_title, _, en_solutions) in zip(zh, en):
        assert zh_title.split()[0] == en_title.split()[0], (page, zh_title, en_title)  # "1." … the same number
        zh_code, en_code = python_blocks(zh_solutions[0]), python_blocks(en_solutions[0])
        assert len(en_code) == len(zh_code), f"{page}.en.md: {en_title!r}"
        for i, (zh_block, en_block) in enumerate(zip(zh_code, en_code)):
            assert same_program(zh_block, en_block), f"{page}.en.md: {en_title!r}, block {i + 1}: not the Chinese code"
    fences = [m.group(0) for m in re.finditer(r"^ *```.*$", snippet(page, "zh"), flags=re.M)]
    assert [m.group(0) for m in re.finditer(r"^ *```.*$", snippet(page, "en"), flags=re.M)] == fences


@pytest.mark.parametrize("page", PAGES)
def test_english_solutions_have_no_chinese_comments_or_labels(page):
    for title, _, solutions in exercises(snippet(page, "en"), "en"):
        for code in python_blocks(solutions[0]):
            assert not chinese_for_readers(code), f"{page}.en.md: {title!r}: {chinese_for_readers(code)}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_solutions_run_and_check_themselves(page, lang):
    name = f"{page}{SUFFIX[lang]}"
    namespace: dict = {"__name__": f"exercises_{page}"}
    grad, cwd = torch.is_grad_enabled(), os.getcwd()
    os.chdir(ROOT)
    try:
        number = 0
        for title, _, solutions in exercises(snippet(page, lang), lang):
            for code in python_blocks(solutions[0]):
                number += 1
                where = f"docs/exercises/{name}, block {number} ({title})"
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
