"""docs/walkthrough.md is one program: its python blocks run top to bottom and print what the page shows.

Each ```python block must be followed by an output block (```text, or ```diff for a printed diff) holding
exactly what the block prints. Whitespace is normalised; a decimal number may differ by one unit in its
last printed digit (a different CPU's kernels may round the other way), every other character must match.

The English edition (docs/walkthrough.en.md) translates the prose only: its fenced blocks (code, comments and printed
output) are byte for byte the Chinese page's, so it shows the same program and the same output without running again.
"""

import contextlib
import inspect
import io
import os
import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "walkthrough.md"
ENGLISH = ROOT / "docs" / "walkthrough.en.md"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
NUMBER = re.compile(r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
CJK = re.compile(r"[\u4e00-\u9fff]")
OUTPUT_LANGS = ("text", "diff")


def page_blocks(text: str) -> list[tuple[str, str, int]]:
    """Every top-level fenced block of the page as ``(language, body, line number)``."""
    return [(m["lang"], m["body"], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def program(text: str) -> list[tuple[str, str, int]]:
    """``(code, expected output, line)`` for each python block; each must be followed by its output block."""
    blocks = page_blocks(text)
    pairs = []
    for i, (lang, body, line) in enumerate(blocks):
        if lang != "python":
            continue
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        assert following is not None and following[0] in OUTPUT_LANGS, (
            f"walkthrough.md line {line}: a python block must be followed by its printed output (```text)"
        )
        between = text.splitlines()[line + body.count("\n") + 1 : following[2] - 1]
        assert not any(s.strip() for s in between), f"walkthrough.md line {line}: prose between code and output"
        pairs.append((body, following[1], line))
    return pairs


def _split(text: str) -> list[str]:
    return [piece for token in text.split() for piece in NUMBER.split(token) if piece]


def same_output(printed: str, expected: str) -> bool:
    """Equal up to whitespace, and decimals up to one unit in their last printed digit."""
    got, want = _split(printed), _split(expected)
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if a == b:
            continue
        if not (NUMBER.fullmatch(a) and NUMBER.fullmatch(b)) or "." not in b or "e" in b.lower():
            return False
        decimals = len(b.split(".")[1])
        if abs(float(a) - float(b)) > 1.01 * 10**-decimals:
            return False
    return True


def run_page(text: str) -> list[tuple[str, str, int]]:
    """Run the page's program; return ``(printed, expected, line)`` per block."""
    namespace: dict = {"__name__": "walkthrough"}
    results = []
    grad, cwd = torch.is_grad_enabled(), os.getcwd()
    os.chdir(ROOT)
    try:
        for code, expected, line in program(text):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"walkthrough.md:{line}", "exec"), namespace)
            results.append((out.getvalue(), expected, line))
    finally:
        os.chdir(cwd)
        torch.set_grad_enabled(grad)
        torch.set_printoptions(profile="default")
    return results


@pytest.fixture(scope="module")
def page_text() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def english_text() -> str:
    return ENGLISH.read_text(encoding="utf-8")


def test_every_block_prints_what_the_page_shows(page_text):
    results = run_page(page_text)
    assert len(results) >= 15
    for printed, expected, line in results:
        assert same_output(printed, expected), (
            f"walkthrough.md line {line}: the block prints\n{printed}\nbut the page shows\n{expected}"
        )


def test_the_comparison_is_strict_about_everything_but_the_last_digit():
    assert same_output("tensor([0.144,  0.319])", "tensor([0.145, 0.319])")
    assert not same_output("tensor([0.144, 0.319])", "tensor([0.146, 0.319])")
    assert not same_output("torch.Size([1, 7])", "torch.Size([1, 8])")
    assert not same_output("it 's good", "it 's fine")
    assert not same_output("a b", "a b c")


@pytest.mark.parametrize("edition", ["zh", "en"])
def test_the_page_covers_every_stage_and_concept(edition, page_text, english_text):
    page_text = page_text if edition == "zh" else english_text
    for needle in ("embedding", "bidirectional", "bridge", "prepare", "h_t", "e_{t,s}", "\\alpha_{t,s}", "c_t",
                   "\\tilde h_t", "logits", "teacher forcing", "C_t = \\bar h_t", "```diff", "BLEU",
                   "brevity penalty", "sacrebleu.corpus_bleu", "attention_core/training.py"):
        assert needle in page_text, needle


def test_the_diff_is_the_decoders_own_code(page_text):
    from attention_core.decoder import BahdanauDecoder, NoAttentionDecoder

    diff = next(body for lang, body, _ in page_blocks(page_text) if lang == "diff")
    old = inspect.getsource(NoAttentionDecoder.step)
    new = inspect.getsource(BahdanauDecoder.step)
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith("-"):
            assert line[1:].strip() in old, line
        elif line.startswith("+"):
            assert line[1:].strip() in new, line
        elif line.strip():
            assert line.strip() in old and line.strip() in new, line


def test_the_english_page_shows_the_same_program_and_output(page_text, english_text):
    """Every fenced block (python, its printed output, the diff) is the Chinese page's, in the same order."""
    chinese = [(lang, body) for lang, body, _ in page_blocks(page_text)]
    english = [(lang, body) for lang, body, _ in page_blocks(english_text)]
    assert len(english) == len(chinese)
    for i, (zh, en) in enumerate(zip(chinese, english)):
        assert en == zh, f"walkthrough.en.md block {i + 1} ({en[0]}) differs from the Chinese page's"
    assert len(program(english_text)) == len(program(page_text))  # each output right after its code, no prose between


def test_the_english_page_has_english_headings_and_anchors(page_text, english_text):
    prose = FENCE.sub("", english_text)  # a "# comment" inside a code block is no heading
    headings = re.findall(r"^#+ (.*)$", prose, flags=re.M)
    assert headings and not [h for h in headings if CJK.search(h)]
    for anchor in re.findall(r"\{ #([\w-]+) \}", page_text):  # explicit anchors that links point to
        assert "{ #" + anchor + " }" in english_text, anchor
