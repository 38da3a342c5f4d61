"""The public surface: exports, documentation in sync with the code, the dependency
direction between areas, one query layer (Cypher only in graphdb/, LanceDB tables only in
vectors/), render-only widgets, and lint (ruff and mypy on the whole package)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import types
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


LAYERS = {
    # area -> areas of ours it must not import (the dependency direction of HOUSE_STYLE)
    "engine": {"memory", "graphdb", "vectors", "store", "ingest", "widgets", "analysis",
               "export", "curate", "extract", "brief", "cli", "embed", "bench", "text"},
    "graphdb": {"memory", "widgets", "analysis", "export", "curate", "brief", "cli", "bench"},
    "vectors": {"memory", "widgets", "analysis", "export", "curate", "brief", "cli", "bench"},
    "text": {"memory", "widgets", "graphdb", "vectors", "store", "cli", "bench"},
}


LAZY = {("engine/trace.py", "context", "brief")}
"""Imports allowed inside one function only: ``RecallTrace.context`` builds its block with
the brief area, imported when called (the engine imports nothing of it at import time)."""


def _imports(path: Path, *, runtime: bool = False) -> set[str]:
    """The areas of ours ``path`` imports (siblings inside its own area not counted),
    except the function-level imports :data:`LAZY` allows; ``runtime``: not those under
    ``if TYPE_CHECKING:`` either."""
    tree = ast.parse(path.read_text("utf-8"))
    rel = path.relative_to(PKG).as_posix()
    allowed = {(fn, area) for f, fn, area in LAZY if f == rel}
    found: set[str] = set()

    def visit(node: ast.AST, fn: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if runtime and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(
                    child.test):
                continue
            name = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) \
                else fn
            area = None
            if isinstance(child, ast.ImportFrom) and child.level >= 2:
                parts = (child.module or "").split(".")
                area = parts[0] if parts[0] else child.names[0].name
            elif isinstance(child, ast.ImportFrom) and (child.module or "").startswith(
                    "akasha_explorer."):
                area = (child.module or "").split(".")[1]
            if area is not None and (fn, area) not in allowed:
                found.add(area)
            visit(child, name)

    visit(tree, None)
    return found


@pytest.mark.parametrize("area", sorted(LAYERS))
def test_dependency_direction(area: str) -> None:
    for path in sorted((PKG / area).glob("*.py")):
        bad = _imports(path) & LAYERS[area]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_store_core_imports_no_area() -> None:
    """The Store and its parts sit below the areas: store/ imports none of them at run
    time (the doctor, an area that lives beside the store it checks, and the CLI commands
    aside; the Store names the extractor protocol in a type only)."""
    areas = {"ingest", "extract", "curate", "analysis", "brief", "export", "widgets",
             "memory", "cli", "bench"}
    for path in sorted((PKG / "store").glob("*.py")):
        if path.name in ("doctor.py", "commands.py"):
            continue
        bad = _imports(path, runtime=True) & areas
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


AREAS = ("ingest", "extract", "curate", "analysis", "brief", "export", "store", "graphdb",
         "vectors", "engine", "text")
"""Packages below the Memory facade: they take a Store, never a Memory."""


@pytest.mark.parametrize("area", AREAS)
def test_no_area_imports_the_memory_facade(area: str) -> None:
    """Areas are functions and small classes of a Store; only the facade (memory.py), the
    CLI, the benchmarks harness and the widgets sit on top of Memory."""
    for path in sorted((PKG / area).glob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                assert not (mod == "memory" or mod.endswith(".memory")
                            or mod == "akasha_explorer.memory"), \
                    f"{path.relative_to(ROOT)} imports the Memory facade"
                names = {a.name for a in node.names}
                assert not ((node.level >= 2 and not mod) and "memory" in names), \
                    f"{path.relative_to(ROOT)} imports the Memory facade"


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
        for bad in sorted(mods & {"graphdb", "vectors", "store", "clikit", "cli"}):
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
def test_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    proc = subprocess.run([ruff, "check", "akasha_explorer", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]


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
