"""The layout: each folder is one thing, and imports only point one way.

``attention_core/`` (the library) imports nothing of ours; ``demo/`` + ``app.py`` (the app) use the library;
``reports/`` (tables and figures) use both; ``benchmarks/`` may use anything, and nothing uses them. No module
imports another in a circle, lazily inside a function or not.

Inside the library, each subpackage imports only those below it (``LIBRARY``): the model and the data stand on
nothing of ours; decoding on them; analysis on decoding; training on analysis; the Hub (with the zoo) on training;
the command line on everything. The text heuristics of ``editing`` (names, numbers, rare words) stand on decoding,
and only the Hub's zoo and the command line use them: the model and training never do.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("attention_core", "demo", "reports", "benchmarks")
MAY_IMPORT = {
    "attention_core": {"attention_core"},
    "demo": {"attention_core", "demo"},
    "app": {"attention_core", "demo"},
    "reports": {"attention_core", "demo", "reports"},
    "benchmarks": {"attention_core", "demo", "reports", "benchmarks"},
}
"""Which folders the modules of each folder may import from."""
_BASE = {"model", "data"}
LIBRARY = {
    "model": {"model"},
    "data": {"data"},
    "decoding": _BASE | {"decoding"},
    "editing": _BASE | {"decoding", "editing"},
    "analysis": _BASE | {"decoding", "analysis"},
    "training": _BASE | {"decoding", "analysis", "training"},
    "hub": _BASE | {"decoding", "editing", "analysis", "training", "hub"},
    "cli": _BASE | {"decoding", "editing", "analysis", "training", "hub", "cli"},
    "__init__": _BASE | {"decoding", "editing", "analysis", "training", "hub", "cli"},
}
"""Which of the library's subpackages the modules of each may import from (``cli`` and ``__init__`` are modules)."""


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: modules of ours it imports}``, every import statement included (lazy ones too)."""
    files = {".".join((p, *f.relative_to(root / p).with_suffix("").parts)): f
             for p in PACKAGES for f in sorted((root / p).rglob("*.py"))}
    files["app"] = root / "app.py"
    graph = {}
    for name, path in files.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [f"{node.module}.{a.name}" for a in node.names]  # a module, or a name in node.module
                modules = [m for m in named if m in files]
                modules += [node.module] if any(m not in files for m in named) else []
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            for m in modules:
                if m.split(".")[0] in PACKAGES:
                    deps.add(m if m in files else f"{m}.__init__" if f"{m}.__init__" in files else m)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as ``[a, b, …, a]``, or ``None`` (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points the wrong way across folders."""
    return [f"{m} imports {d}" for m, deps in sorted(graph.items()) for d in sorted(deps)
            if d.split(".")[0] not in MAY_IMPORT[m.split(".")[0]]]


def floor(module: str) -> str:
    """The library subpackage (or top-level module) a library module belongs to: ``attention_core.model.scores`` →
    ``model``."""
    return module.split(".")[1]


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import inside the library that points up (or sideways) between its subpackages."""
    return [f"{m} imports {d}" for m, deps in sorted(graph.items()) if m.startswith("attention_core.")
            for d in sorted(deps) if d.startswith("attention_core.") and floor(d) not in LIBRARY[floor(m)]]


def through_init(graph: dict[str, set[str]]) -> list[str]:
    """Library modules that import a name through a subpackage's ``__init__`` instead of the module that holds it."""
    return [f"{m} imports {d}" for m, deps in sorted(graph.items()) if m.startswith("attention_core.")
            for d in sorted(deps) if d.startswith("attention_core.") and d.endswith(".__init__")
            and d != "attention_core.__init__"]


def test_the_checks_catch_a_circle_and_a_wrong_arrow():
    assert find_cycle({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}}) == ["a.x", "a.y", "a.z", "a.x"]
    assert find_cycle({"a.x": {"a.y"}, "a.y": set()}) is None
    assert wrong_way({"attention_core.cli": {"reports.report"}, "demo.ui": {"attention_core.decoding.couplet"}}) == [
        "attention_core.cli imports reports.report"]
    assert upward({"attention_core.model.seq2seq": {"attention_core.data.batch", "attention_core.model.step"},
                   "attention_core.training.loop": {"attention_core.editing.names", "attention_core.analysis.metrics"},
                   "attention_core.hub.zoo": {"attention_core.editing.namecache"}}) == [
        "attention_core.model.seq2seq imports attention_core.data.batch",
        "attention_core.training.loop imports attention_core.editing.names"]


def test_no_import_circle():
    graph = import_graph()
    assert {"attention_core.model.config", "demo.ui", "reports.report", "app"} <= graph.keys()
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])


def test_imports_point_one_way_library_app_reports():
    assert wrong_way(import_graph()) == []


def test_the_library_subpackages_import_only_those_below_them():
    graph = import_graph()
    assert {"attention_core.model.scores", "attention_core.training.loop", "attention_core.hub.zoo"} <= graph.keys()
    assert {floor(m) for m in graph if m.startswith("attention_core.")} == LIBRARY.keys()
    assert upward(graph) == []


def test_library_modules_import_the_module_that_holds_a_name_not_a_package():
    assert through_init(import_graph()) == []


def test_the_reports_own_their_command_and_the_library_cli_does_not_know_them(capsys):
    from attention_core.cli import build_parser
    from reports.__main__ import main as reports_main

    with pytest.raises(SystemExit):
        build_parser().parse_args(["report"])
    assert "invalid choice: 'report'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        reports_main(["--help"])
    assert done.value.code == 0 and "--results" in capsys.readouterr().out


def long_functions(root: Path = ROOT, limit: int = 100) -> list[str]:
    """Functions (and methods) of the library, the app and the reports longer than ``limit`` lines."""
    found = []
    for package in ("attention_core", "demo", "reports"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > limit:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_of_the_library_the_app_or_the_reports_is_over_100_lines(tmp_path):
    (tmp_path / "attention_core" / "model").mkdir(parents=True)
    (tmp_path / "demo").mkdir()
    (tmp_path / "reports").mkdir()
    (tmp_path / "attention_core" / "model" / "long.py").write_text("def f():\n" + "    x = 1\n" * 100)
    assert long_functions(tmp_path) == ["attention_core/model/long.py:1 f (101 lines)"]
    assert long_functions() == []

