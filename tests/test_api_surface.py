"""The public surface: exports, documentation in sync with the code, the dependency
direction between areas, and lint (ruff on everything, mypy on the engine)."""

from __future__ import annotations

import ast
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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            parts = (node.module or "").split(".")
            if node.level == 1:  # sibling inside the same area
                continue
            found.add(parts[0] if parts[0] else (node.names[0].name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("akasha_explorer."):
            found.add(node.module.split(".")[1])
    return found


@pytest.mark.parametrize("area", sorted(LAYERS))
def test_dependency_direction(area: str) -> None:
    for path in sorted((PKG / area).glob("*.py")):
        bad = _imports(path) & LAYERS[area]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_widgets_never_touch_the_stores_directly() -> None:
    for path in sorted((PKG / "widgets").glob("*.py")):
        mods = _imports(path)
        assert not mods & {"graphdb", "vectors", "store"}, path.name


@pytest.mark.skipif(shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
                    reason="ruff not installed (dev extra)")
def test_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    proc = subprocess.run([ruff, "check", "akasha_explorer", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_mypy_engine() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                           "akasha_explorer/engine"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]
