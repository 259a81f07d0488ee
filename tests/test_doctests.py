"""The examples in the docstrings (rendered on the API pages) run and print what they claim."""

import doctest
import importlib
import pkgutil

import attention_core


def test_docstring_examples():
    attempted, failures = 0, []
    for info in pkgutil.iter_modules(attention_core.__path__, "attention_core."):
        module = importlib.import_module(info.name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        attempted += result.attempted
        if result.failed:
            failures.append(f"{info.name}: {result.failed} of {result.attempted}")
    assert not failures, "docstring examples failed: " + "; ".join(failures)
    assert attempted >= 20  # scores, attention, seq2seq, precision, metrics, text, vocab carry examples
