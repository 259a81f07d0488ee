"""docs/walkthrough.md is one program: its python blocks run top to bottom and print what the page shows.

Each ```python block must be followed by an output block (```text, or ```diff for a printed diff) holding
exactly what the block prints. Whitespace is normalised; a decimal number may differ by one unit in its
last printed digit (a different CPU's kernels may round the other way), every other character must match.

The English edition (docs/walkthrough.en.md) runs and is checked the same way. It shows the same program: its blocks
are the Chinese page's in the same order, and each python block is the same code up to what a translator may change
(comments, docstrings and the literal text of print()'s arguments; see ``same_program``); names, numbers, calls and
data strings (a Chinese sentence to translate stays Chinese) must match, and each printed output holds the same
numbers line by line. Its comments and printed labels must not be Chinese (``chinese_for_readers``).
``tests/test_exercises.py`` compares the exercises' two editions with the same functions.
"""

import ast
import contextlib
import inspect
import io
import os
import re
import tokenize
from pathlib import Path

import pytest
import torch
from fences import FENCE

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "walkthrough.md"
ENGLISH = ROOT / "docs" / "walkthrough.en.md"
NUMBER = re.compile(r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
CJK = re.compile(r"[\u4e00-\u9fff]")
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # characters and CJK / full-width punctuation
OUTPUT_LANGS = ("text", "diff")
PAGES = {"zh": PAGE, "en": ENGLISH}


def page_blocks(text: str) -> list[tuple[str, str, int]]:
    """Every top-level fenced block of the page as ``(language, body, line number)``."""
    return [(m["lang"], m["body"], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def program(text: str, name: str = "walkthrough.md") -> list[tuple[str, str, int]]:
    """``(code, expected output, line)`` for each python block; each must be followed by its output block."""
    blocks = page_blocks(text)
    pairs = []
    for i, (lang, body, line) in enumerate(blocks):
        if lang != "python":
            continue
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        assert following is not None and following[0] in OUTPUT_LANGS, (
            f"{name} line {line}: a python block must be followed by its printed output (```text)"
        )
        between = text.splitlines()[line + body.count("\n") + 1 : following[2] - 1]
        assert not any(s.strip() for s in between), f"{name} line {line}: prose between code and output"
        pairs.append((body, following[1], line))
    return pairs


class _Translatable(ast.NodeTransformer):
    """Replaces what a translation may change with a placeholder, and collects the replaced text.

    Docstrings become ``<doc>``; a string literal that is a positional argument of ``print`` (or the literal
    part of an f-string argument) becomes ``<label N…>``, keeping the numbers it contains. Everything else, the
    format specs and expressions inside f-strings included, is left as it is.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []

    def _replace(self, node: ast.Constant, kind: str) -> ast.Constant:
        self.texts.append(node.value)
        numbers = " ".join(NUMBER.findall(node.value)) if kind == "label" else ""
        return ast.Constant(f"<{kind} {numbers}>")

    def _docstring(self, node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            first.value = self._replace(first.value, "doc")
        return node

    visit_Module = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _docstring

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            node.args = [self._label(arg) for arg in node.args]  # not the keywords (end=, sep=)
        return node

    def _label(self, arg: ast.expr) -> ast.expr:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return self._replace(arg, "label")
        if isinstance(arg, ast.JoinedStr):  # an f-string: its literal parts, not its {expressions} or formats
            arg.values = [self._label(part) if isinstance(part, ast.Constant) else part for part in arg.values]
        return arg


def skeleton(code: str) -> tuple[str, list[str]]:
    """The code's syntax tree with comments, docstrings and print labels taken out, and the texts taken out."""
    translatable = _Translatable()
    tree = translatable.visit(ast.parse(code))
    return ast.dump(tree), translatable.texts


def same_program(code: str, translation: str) -> bool:
    """Whether ``translation`` is ``code`` with only its comments, docstrings and printed labels changed."""
    return skeleton(code)[0] == skeleton(translation)[0]


def same_values(printed: str, translation: str) -> bool:
    """Whether two printed outputs have the same lines holding the same numbers (the labels may differ)."""
    lines, other = printed.strip().splitlines(), translation.strip().splitlines()
    return len(lines) == len(other) and all(NUMBER.findall(a) == NUMBER.findall(b) for a, b in zip(lines, other))


def chinese_for_readers(code: str) -> list[str]:
    """The comments, docstrings and printed labels of ``code`` that contain Chinese (data strings may)."""
    comments = [
        tok.string for tok in tokenize.generate_tokens(io.StringIO(code).readline) if tok.type == tokenize.COMMENT
    ]
    return [text for text in comments + skeleton(code)[1] if CHINESE.search(text)]


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


def run_page(text: str, name: str = "walkthrough.md") -> list[tuple[str, str, int]]:
    """Run the page's program; return ``(printed, expected, line)`` per block."""
    namespace: dict = {"__name__": "walkthrough"}
    results = []
    grad, cwd = torch.is_grad_enabled(), os.getcwd()
    os.chdir(ROOT)
    try:
        for code, expected, line in program(text, name):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{name}:{line}", "exec"), namespace)
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


@pytest.mark.parametrize("edition", PAGES)
def test_every_block_prints_what_the_page_shows(edition):
    name = PAGES[edition].name
    results = run_page(PAGES[edition].read_text(encoding="utf-8"), name)
    assert len(results) >= 15
    for printed, expected, line in results:
        assert same_output(printed, expected), (
            f"{name} line {line}: the block prints\n{printed}\nbut the page shows\n{expected}"
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
    for needle in ("embedding", "bidirectional", "bridge", "prepare", "h_t", "e_{t,s}", "a_{t,s}", "c_t",
                   "\\tilde h_t", "logits", "teacher forcing", "c_t = \\bar h_t", "```diff", "BLEU",
                   "brevity penalty", "sacrebleu.corpus_bleu", "attention_core/training/loop.py",
                   "label_smoothing=0.1"):
        assert needle in page_text, needle
    assert "C_t" not in page_text  # the context is c_t on every page (the notation box on the steps page)


def test_the_diff_is_the_decoders_own_code(page_text):
    from attention_core.model.decoder import BahdanauDecoder, NoAttentionDecoder

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
    """The same fenced blocks in the same order: the same code and the same printed numbers, in English words."""
    chinese, english = page_blocks(page_text), page_blocks(english_text)
    assert [lang for lang, _, _ in english] == [lang for lang, _, _ in chinese]
    for (lang, zh, _), (_, en, line) in zip(chinese, english):
        where = f"walkthrough.en.md line {line} ({lang})"
        if lang == "python":
            assert same_program(zh, en), f"{where}: not the Chinese page's code (only comments and labels may differ)"
        elif lang == "diff":
            assert en == zh, f"{where}: the diff is printed by the code, it is the same in both editions"
        else:
            assert same_values(zh, en), f"{where}: the printed lines do not hold the Chinese page's numbers"
    assert len(program(english_text, "walkthrough.en.md")) == len(program(page_text))


def test_the_english_page_has_no_chinese_comments_or_labels(english_text):
    for lang, code, line in page_blocks(english_text):
        if lang == "python":
            assert not chinese_for_readers(code), f"walkthrough.en.md line {line}: {chinese_for_readers(code)}"


def test_the_edition_comparison_tolerates_translation_and_nothing_else():
    code = (
        "def show(row):\n"
        '    """一行权重。"""\n'
        '    print("权重", f"第 {row + 1} 步 {row:.3f}", end="")  # 打印\n'
        'sentence = "今天天气很好。"\n'
        "x = model.encoder(src[:, 2], 0.5)\n"
    )
    translation = (
        "def show(row):\n"
        '    """One row of weights."""\n'
        '    print("weights", f"step {row + 1}: {row:.3f}", end="")  # printed\n'
        "\n"
        'sentence = "今天天气很好。"  # data stays Chinese\n'
        "x = model.encoder(src[:, 2], 0.5)\n"
    )
    assert same_program(code, translation)
    assert not chinese_for_readers(translation)
    assert sorted(chinese_for_readers(code)) == sorted(["# 打印", "一行权重。", "权重", "第 ", " 步 "])
    for changed in (
        translation.replace("0.5", "0.6"),  # a number
        translation.replace("src[:, 2]", "src[:, 3]"),  # an index
        translation.replace("encoder", "decoder"),  # a name
        translation.replace("今天天气很好。", "今天天气不好。"),  # a data string
        translation.replace(":.3f", ":.2f"),  # how a value is printed
        translation.replace('end=""', 'end=" "'),  # a keyword argument of print
        translation.replace("{row + 1}", "{row}"),  # a printed expression
        translation.replace("step {row + 1}", "step 1 {row + 1}"),  # a number in a label
        translation.replace("x = model", "y = model"),  # a changed statement
        translation.replace("x = model.encoder(src[:, 2], 0.5)\n", ""),  # a missing statement
    ):
        assert not same_program(code, changed), changed
    assert same_values("两个「天」之间的距离 = 1.835\n今 -0.365", "distance = 1.835\n今 -0.365")
    assert not same_values("距离 = 1.835", "distance = 1.836")
    assert not same_values("距离 = 1.835\nsum = 1.000", "distance = 1.835")


def test_the_english_page_has_english_headings_and_anchors(page_text, english_text):
    prose = FENCE.sub("", english_text)  # a "# comment" inside a code block is no heading
    headings = re.findall(r"^#+ (.*)$", prose, flags=re.M)
    assert headings and not [h for h in headings if CJK.search(h)]
    for anchor in re.findall(r"\{ #([\w-]+) \}", page_text):  # explicit anchors that links point to
        assert "{ #" + anchor + " }" in english_text, anchor
