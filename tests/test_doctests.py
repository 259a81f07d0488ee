"""The examples in the docstrings (rendered on the API pages, and the app's) run and print what they claim."""

import doctest
import importlib
import pkgutil

import pytest

import attention_core
import demo


@pytest.mark.parametrize("package,least", [(attention_core, 20), (demo, 15)])
def test_docstring_examples(package, least):
    attempted, failures = 0, []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):  # the subpackages' modules too
        module = importlib.import_module(info.name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        attempted += result.attempted
        if result.failed:
            failures.append(f"{info.name}: {result.failed} of {result.attempted}")
    assert not failures, "docstring examples failed: " + "; ".join(failures)
    assert attempted >= least  # the library: scores, attention, seq2seq … ; the app: links, handlers, plots …
