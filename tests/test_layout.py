"""The layout: each folder is one thing, and imports only point one way.

``attention_core/`` (the library) imports nothing of ours; ``demo/`` + ``app.py`` (the app) use the library;
``reports/`` (tables and figures) use both; ``benchmarks/`` may use anything, and nothing uses them. No module
imports another in a circle, lazily inside a function or not.
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


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: modules of ours it imports}``, every import statement included (lazy ones too)."""
    files = {f"{p}.{f.stem}": f for p in PACKAGES for f in sorted((root / p).glob("*.py"))}
    files["app"] = root / "app.py"
    graph = {}
    for name, path in files.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
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


def test_the_checks_catch_a_circle_and_a_wrong_arrow():
    assert find_cycle({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}}) == ["a.x", "a.y", "a.z", "a.x"]
    assert find_cycle({"a.x": {"a.y"}, "a.y": set()}) is None
    assert wrong_way({"attention_core.cli": {"reports.report"}, "demo.ui": {"attention_core.couplet"}}) == [
        "attention_core.cli imports reports.report"]


def test_no_import_circle():
    graph = import_graph()
    assert {"attention_core.config", "demo.ui", "reports.report", "app"} <= graph.keys()
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])


def test_imports_point_one_way_library_app_reports():
    assert wrong_way(import_graph()) == []


def test_the_reports_own_their_command_and_the_library_cli_does_not_know_them(capsys):
    from attention_core.cli import build_parser
    from reports.__main__ import main as reports_main

    with pytest.raises(SystemExit):
        build_parser().parse_args(["report"])
    assert "invalid choice: 'report'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        reports_main(["--help"])
    assert done.value.code == 0 and "--results" in capsys.readouterr().out
