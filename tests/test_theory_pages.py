"""The theory pages read as issue #53 asks: the idea first, one notation, one summary table, worked examples that run.

* Every theory page, in both editions, links to the one summary table of scores and attention families
  (``scores.md#at-a-glance``) and to the notation box; the Chinese pages pull in no English-only table from
  ``results/`` (those live on the Results page).
* The steps page holds the notation box with the course notes' column and the one "library vs paper" box, in both
  editions.
* Each ``??? example`` box on a theory page holds a python block that runs and checks itself; the English block is the
  Chinese one up to comments (``same_program`` from ``tests/test_walkthrough.py``).
"""

import contextlib
import io
import re
import textwrap
from pathlib import Path

import pytest
from fences import FENCE
from test_walkthrough import same_program

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "docs" / "theory"
PAGES = ("why", "qkv", "steps", "scores", "bahdanau-luong", "local", "masking", "decoding", "transformer", "alignment")
SUFFIX = {"zh": ".md", "en": ".en.md"}
EXAMPLE = re.compile(r'^\?\?\?\+? example "[^"]*"\s*$')


def page(name: str, lang: str) -> str:
    return (THEORY / f"{name}{SUFFIX[lang]}").read_text(encoding="utf-8")


def examples(text: str) -> list[str]:
    """The python blocks inside the page's ``??? example`` boxes, dedented."""
    lines, found, i = text.splitlines(), [], 0
    while i < len(lines):
        if EXAMPLE.match(lines[i]):
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i])
                i += 1
            found += [m["body"] for m in FENCE.finditer(textwrap.dedent("\n".join(block))) if m["lang"] == "python"]
        else:
            i += 1
    return found


@pytest.mark.parametrize("lang", SUFFIX)
@pytest.mark.parametrize("name", PAGES)
def test_every_theory_page_links_to_the_summary_table_and_the_notation(name, lang):
    text = page(name, lang)
    if name != "scores":
        assert "scores.md#at-a-glance" in text, (name, lang)
    if name != "steps":
        assert "steps.md#notation" in text, (name, lang)
    if lang == "zh":  # the tables python -m reports writes are English: the Chinese theory pages link to Results
        assert not re.search(r'^--8<-- "results/', text, flags=re.M), name


@pytest.mark.parametrize("lang", SUFFIX)
def test_the_steps_page_has_the_notation_crosswalk_and_the_library_vs_paper_box(lang):
    text = page("steps", lang)
    assert '<a id="notation"></a>' in text and '<a id="library-vs-paper"></a>' in text
    header = next(line for line in text.splitlines() if "SLP3 |" in line and "Bahdanau 2014" in line)
    assert header.rstrip().endswith(("| Course notes |", "| 课程讲义 |")), header
    for departure in ("maxout", "t \\cdot S / T", "REINFORCE", "pre-LN", "varepsilon = 0.1", "overleftarrow{h}_1",
                      "U_a"):
        assert departure in text.split('<a id="library-vs-paper"></a>')[1], (lang, departure)
    for difference in ("a(s_i, h_j)", "2D + 1", "O(n^2)", "计算量大大减少"):  # the notes against the papers
        assert difference in text, (lang, difference)


def test_the_summary_table_covers_every_score_and_family_in_both_editions():
    for lang in SUFFIX:
        table = page("scores", lang).split("{ #at-a-glance }")[1].split("???")[0]
        for name in ('score="concat"', 'score="location"', 'score="general"', 'score="dot"', 'score="scaled_dot"',
                     'attention="global"', 'attention="local-m"', "hard=True", 'decoder="transformer"',
                     "Graves et al. 2014", "Xu et al. 2015", "Cheng et al. 2016"):
            assert name in table, (lang, name)


WORKED = [(name, k) for name in PAGES for k in range(len(examples(page(name, "zh"))))]


def test_the_worked_examples_are_where_the_issue_asks_for_them():
    assert {name for name, _ in WORKED} >= {"scores", "local"}  # the steps page's tiny example, for concat and local-p
    for name in PAGES:
        assert len(examples(page(name, "zh"))) == len(examples(page(name, "en"))), name


@pytest.mark.parametrize("name,k", WORKED)
def test_a_worked_example_runs_and_the_english_one_is_the_same_program(name, k, monkeypatch):
    monkeypatch.chdir(ROOT)
    chinese, english = examples(page(name, "zh"))[k], examples(page(name, "en"))[k]
    assert same_program(chinese, english), f"{name}: example {k + 1} differs between the editions"
    for code in (chinese, english):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{name} example {k + 1}", "exec"), {})


def _inside(line: str, indent: int) -> bool:
    """A blank line, or one indented deeper than the box that holds it."""
    return not line.strip() or len(line) - len(line.lstrip()) > indent


def prose(text: str) -> str:
    """A page's text outside fenced code, folded boxes (``??? …`` and their indented body), snippets and HTML tags."""
    out, lines, i, fence = [], text.splitlines(), 0, None
    while i < len(lines):
        line, stripped = lines[i], lines[i].lstrip()
        if fence:
            fence = None if stripped.startswith(fence) else fence
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif re.match(r"\s*\?\?\?\+?\s", line):
            indent = len(line) - len(stripped)
            while i + 1 < len(lines) and _inside(lines[i + 1], indent):
                i += 1
        elif not stripped.startswith("--8<--"):
            out.append(line)
        i += 1
    return re.sub(r"</?[A-Za-z][^<>]*>", " ", "\n".join(out))


def words(text: str) -> int:
    """Words of prose: whitespace-separated tokens with a letter or a digit (formulas and table cells included)."""
    return sum(1 for token in prose(text).split() if re.search(r"[A-Za-z0-9]", token))


@pytest.mark.parametrize("name", PAGES)
def test_every_english_theory_page_is_at_most_1300_words_outside_code_and_folded_boxes(name):
    assert words(page(name, "en")) <= 1300, (name, words(page(name, "en")))


def test_the_word_count_skips_code_folded_boxes_and_snippets():
    text = "# Title\n\nOne two.\n\n```python\nx = 1\n```\n\n??? note \"Folded\"\n\n    hidden words here\n\nThree.\n" \
           "\n--8<-- \"docs/exercises/why.en.md\"\n<iframe src=\"a\"></iframe>\n"
    assert words(text) == 4  # Title, One, two., Three.
