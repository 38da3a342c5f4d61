"""The public surface: exports, documentation in sync with the code, the dependency
direction between areas (tiers, no import cycles, commands in cli/), one query layer (Cypher only in graphdb/, LanceDB tables only in
vectors/), render-only widgets, and lint (ruff and mypy on the whole package)."""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.config import Settings, setting_docs
from akasha_explorer.refdoc import reference_markdown

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "akasha_explorer"


def test_all_is_sorted_and_nothing_else_leaks() -> None:
    assert list(ak.__all__) == sorted(ak.__all__)
    public = {n for n, v in vars(ak).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(ak.__all__) - {"__version__"}
    for name in ak.__all__:
        assert hasattr(ak, name)


def test_every_setting_has_help_section_and_a_default_of_its_type() -> None:
    docs = setting_docs()
    assert len(docs) == len({d["name"] for d in docs})
    for d in docs:
        assert d["help"].strip(), d["name"]
        assert d["section"].startswith("§"), d["name"]
    assert Settings.from_dict(Settings().to_dict()) == Settings()


def test_reference_doc_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "reference.md").read_text("utf-8")
    assert committed == reference_markdown(), (
        "docs/reference.md is stale: run `python -m akasha_explorer.refdoc > docs/reference.md`")


def _walk(group: click.Group) -> list[click.Command]:
    out: list[click.Command] = []
    for cmd in group.commands.values():
        out.append(cmd)
        if isinstance(cmd, click.Group):
            out.extend(_walk(cmd))
    return out


def test_every_command_and_option_has_help() -> None:
    for cmd in _walk(cli):
        assert (cmd.help or "").strip(), cmd.name
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and p.name != "help":
                assert (p.help or "").strip(), f"{cmd.name} {p.opts}"


TIERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_timing", "_locks"),
    ("ranges", "_fs", "_proc", "served"),
    ("config", "model"),
    ("engine",),
    ("text",),
    ("embed",),
    ("graphdb", "vectors"),
    ("store",),
    ("ingest", "extract", "curate", "analysis", "brief", "export", "doctor", "recalls"),
    ("memory", "protocol"),
    ("server", "widgets", "bench", "integrations", "akasha_explorer"),
    ("cli", "refdoc", "__main__"),
)
"""The house, bottom first (docs/design.md's picture): every area of the package — a
subpackage or a top-level module, ``akasha_explorer`` being the package root — and the
tier it sits on. A module imports areas of its own tier or below, never above: the query
layer (``graphdb/``, ``vectors/``) nothing of the store, the store no area, no area the
Memory facade, nothing but the CLI's own entry points the CLI."""

TIER = {area: k for k, tier in enumerate(TIERS) for area in tier}

UPWARD = {
    ("engine/trace.py", "brief"): "context",
    ("store/store.py", "extract"): "TYPE_CHECKING",
}
"""The only imports that point up, each where it may be: ``RecallTrace.context`` builds
its block with the brief area, imported inside that method when called (the engine
imports nothing of it at import time); the Store names the extractor protocol in a type
only."""

MODULES = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
           for p in sorted(PKG.rglob("*.py"))}
"""Every module of the package by dotted name (a package by its own name)."""


@dataclass(frozen=True)
class Import:
    """One import of a module of ours: the module imported (``from pkg import mod`` names
    ``pkg.mod``; ``from mod import name`` names ``mod``), the function it sits in (None at
    module level) and whether it is under ``if TYPE_CHECKING:``."""

    module: str
    function: str | None
    typing_only: bool

    @property
    def area(self) -> str:
        return _area(self.module)


def _area(module: str) -> str:
    """``akasha_explorer.store.journal`` -> ``store``; the root package is its own area."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports_of(module: str) -> list[Import]:
    """Every import of ours in ``module``: module level, inside functions and under
    ``if TYPE_CHECKING:`` alike."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, fn: str | None, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.ImportFrom):
                base = importlib.util.resolve_name("." * child.level + (child.module or ""),
                                                   package) if child.level else child.module
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else str(base)
                         for a in child.names]
            elif isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            found.extend(Import(n, fn, typing_only) for n in names
                         if n.split(".")[0] == "akasha_explorer")
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) \
                else fn
            visit(child, inner, typing_only or (isinstance(child, ast.If)
                                                and "TYPE_CHECKING" in ast.unparse(child.test)))

    visit(ast.parse(path.read_text("utf-8")), None, False)
    return found


def _imports(path: Path) -> set[str]:
    """The areas of ours the file ``path`` imports, its own area left out."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    return {i.area for i in _imports_of(module)} - {_area(module)}


def test_every_area_has_a_tier() -> None:
    missing = sorted({_area(m) for m in MODULES} - set(TIER))
    assert not missing, f"place {missing} in TIERS (tests/test_api_surface.py)"


@pytest.mark.parametrize("area", [a for tier in TIERS for a in tier])
def test_dependencies_point_down(area: str) -> None:
    """Down or sideways, never up (:data:`TIERS`), counting imports inside functions and
    under ``TYPE_CHECKING`` too, except the :data:`UPWARD` ones where they are allowed."""
    bad = []
    for module in (m for m in MODULES if _area(m) == area):
        rel = MODULES[module].relative_to(PKG).as_posix()
        for i in _imports_of(module):
            if TIER[i.area] <= TIER[area]:
                continue
            where = UPWARD.get((rel, i.area))
            if where is not None and where == ("TYPE_CHECKING" if i.typing_only else i.function):
                continue
            bad.append(f"{rel} imports {i.module} (tier {TIER[i.area]} > {TIER[area]})")
    assert not bad, "\n".join(bad)


def test_the_engine_imports_only_config_and_errors() -> None:
    """The engine is pure: nothing of ours but ``config`` and ``errors`` (and the brief area
    inside ``RecallTrace.context``, see :data:`UPWARD`)."""
    for path in sorted((PKG / "engine").glob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        extra = {a for a in _imports(path) if UPWARD.get((rel, a)) is None}
        assert extra <= {"config", "errors"}, f"{rel} imports {sorted(extra)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan).

    >>> _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = [stack.pop()]
            while comp[-1] != v:
                comp.append(stack.pop())
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours importing it runs: each module it names, anywhere in
    it, and the packages above a named module that are not its own (importing
    ``store.journal`` from graphdb/ runs ``store/__init__.py`` first)."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        own = {module.rsplit(".", k)[0] for k in range(module.count(".") + 1)}
        for i in _imports_of(module):
            parts = i.module.split(".")
            above = {".".join(parts[:k]) for k in range(1, len(parts))}
            graph.setdefault(module, set()).update(({i.module} | above) - own)
    return graph


def test_no_import_cycles() -> None:
    """No two modules of the package need each other, however the import is hidden —
    inside a function, under ``TYPE_CHECKING``, or through a package ``__init__``: every
    dependency goes one way."""
    graph = _import_graph()
    assert sum(map(len, graph.values())) > 500  # the graph is the package's, not empty
    assert "akasha_explorer.doctor" in graph["akasha_explorer.memory"]  # a function's import
    cycles = _cycles(graph)
    assert not cycles, "import cycles (make each dependency go one way):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_commands_live_in_the_cli_package() -> None:
    """Every ``akasha`` command is a module of ``akasha_explorer/cli/``: nothing else
    imports click (but :mod:`akasha_explorer.refdoc`, which walks the group)."""
    found = []
    for module, path in MODULES.items():
        if _area(module) in ("cli", "refdoc"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                else []
            if any(n.split(".")[0] == "click" for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "click outside akasha_explorer/cli/:\n" + "\n".join(found)


def test_each_fixture_is_defined_once() -> None:
    """A fixture name means one thing in the whole suite: defined once — shared ones in
    ``tests/conftest.py`` — and never overridden by a module."""
    where: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                    "fixture" in ast.unparse(d) for d in node.decorator_list):
                where.setdefault(node.name, []).append(path.name)
    assert len(where) > 20
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert not twice, f"fixtures defined more than once: {twice}"


CYPHER = re.compile(r"\b(?:OPTIONAL MATCH|MATCH|MERGE|CREATE|DETACH DELETE)\s*\(|"
                    r"\bUNWIND\s+\$|\bCALL\s+\w+\s*\(|\bRETURN\s+\w+\.|\bCOPY\s+\w+\s+FROM\b")
"""What a Cypher statement looks like (in capitals, as this package writes them)."""


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant and f-string part of a module, docstrings left out."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_cypher_lives_in_graphdb_only() -> None:
    """One query layer: every Cypher statement is a named function of graphdb/."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path.parent.name == "graphdb":
            continue
        for line, text in _strings(ast.parse(path.read_text("utf-8"))):
            if CYPHER.search(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert not found, "Cypher outside graphdb/:\n" + "\n".join(found)


def test_cypher_pattern_finds_what_the_package_writes() -> None:
    """The check above is not vacuous: it sees the statements graphdb/ holds."""
    hits = sum(bool(CYPHER.search(text)) for path in sorted((PKG / "graphdb").glob("*.py"))
               for _, text in _strings(ast.parse(path.read_text("utf-8"))))
    assert hits > 100


LANCE_CALLS = {"read", "add", "delete", "update_columns", "search", "open_table",
               "create_table", "merge_insert"}


def test_lancedb_tables_are_read_in_vectors_only() -> None:
    """One query layer: outside vectors/, nothing names a LanceDB table in a call, builds
    a LanceDB filter (``sql_str``) or imports lancedb."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path.parent.name == "vectors":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in LANCE_CALLS and node.args \
                    and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value in ("messages", "turns"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.func.attr}")
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [a.name for a in node.names] + [node.module or ""] \
                    if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(n == "sql_str" or n.split(".")[0] == "lancedb" for n in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: import")
    assert not found, "LanceDB outside vectors/:\n" + "\n".join(found)


STORE_PARTS = {"graph", "vectors", "mirror", "journal", "store"}
"""What a widget must not reach: the store and its parts (Kuzu, LanceDB, the engine's
mirror, the journal)."""


def _reaches_past(node: ast.Attribute) -> bool:
    """A store part, or another object's private member (``x._y``, ``x`` not self/cls)."""
    if node.attr in STORE_PARTS:
        return True
    own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
    return node.attr.startswith("_") and not node.attr.startswith("__") and not own


def test_widgets_only_render() -> None:
    """Widgets render what the library computed: no widget line reaches a store or its
    parts (``.graph``, ``.vectors``, ``.mirror``, ``.journal``, ``.store``), another
    object's private member (``x._y`` for any ``x`` but ``self``), a store-side module, or
    the CLI's helpers."""
    found = []
    for path in sorted((PKG / "widgets").glob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _reaches_past(node):
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
        mods = _imports(path)
        for bad in sorted(mods & {"graphdb", "vectors", "store", "cli"}):
            found.append(f"{path.name}: imports {bad}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or ""]
                if any(n.split(".")[0] == "click" for n in names):
                    found.append(f"{path.name}:{node.lineno}: imports click")
    assert not found, "widgets reaching past the Memory API:\n" + "\n".join(found)


@pytest.mark.skipif(shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
                    reason="ruff not installed (dev extra)")
@pytest.mark.slow
def test_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    proc = subprocess.run([ruff, "check", "akasha_explorer", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]


@pytest.mark.slow
def test_mypy_package() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "akasha_explorer"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_few_type_ignores() -> None:
    """Types are checked, not silenced: at most 10 ``type: ignore`` in the package."""
    n = sum(p.read_text("utf-8").count("type: ignore") for p in PKG.rglob("*.py"))
    assert n <= 10, f"{n} type: ignore comments"


def test_settings_read_name_real_settings() -> None:
    """The "Settings read:" paragraphs of stage functions name settings that exist."""
    known = set(Settings().to_dict())
    found = 0
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text("utf-8")
        for para in re.findall(r"Settings read: (.*?)(?:\n\s*\n|\"\"\")", text, re.S):
            for name in re.findall(r"``([A-Z][A-Z0-9_]+)``", para):
                found += 1
                assert name in known, f"{path.relative_to(ROOT)}: {name} is no setting"
    assert found > 50
