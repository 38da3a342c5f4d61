"""One home per name: no class name is defined twice in the package, a public ALL_CAPS
module constant is assigned in one module only (the others import it), the constants
issue 23 found copied live where this file says, and two public functions of the same
name return the same type. Read from the source (AST), so a copy fails here before it
can drift."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "akasha_explorer"

SHARED_BY_PROTOCOL = {"COMMANDS"}
"""Names each of several modules defines on purpose: every area's ``commands`` module
lists its click commands as ``COMMANDS`` and the CLI collects them."""

HOMES = {
    "ANCHOR_KINDS": "model.py",
    "ANCHOR_STATUSES": "model.py",
    "REVIEW_KINDS": "model.py",
    "DAY": "config.py",
    "GATE_META": "text/gates.py",
    "LAST_CONTEXT_KEY": "graphdb/kuzu_db.py",
    "EXTRACT_PENDING_KEY": "graphdb/kuzu_db.py",
    "RRF_K": "analysis/methods.py",
    "RANK_METHODS": "analysis/methods.py",
    "EVAL_METHODS": "analysis/methods.py",
    "SURPRISE_KINDS": "analysis/surprises.py",
    "ALL": "widgets/_inputs.py",
    "F64": "engine/state.py",
}
"""Where the constants that had two homes (or none) live now."""


def _modules() -> dict[str, ast.Module]:
    return {p.relative_to(PKG).as_posix(): ast.parse(p.read_text("utf-8"))
            for p in sorted(PKG.rglob("*.py"))}


def _constants(tree: ast.Module) -> set[str]:
    """Public ALL_CAPS names a module binds at its top level by assignment."""
    out: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for t in targets:
            for name in ast.walk(t):
                if isinstance(name, ast.Name) and name.id.isupper() \
                        and not name.id.startswith("_"):
                    out.add(name.id)
    return out


def _is_click_command(fn: ast.FunctionDef) -> bool:
    return any("command" in ast.unparse(d) or "group" in ast.unparse(d)
               or "option" in ast.unparse(d) or "argument" in ast.unparse(d)
               for d in fn.decorator_list)


def test_no_class_name_is_defined_twice() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for mod, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{mod}:{node.lineno}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, f"class names defined more than once: {twice}"


def test_a_public_constant_has_one_home() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for mod, tree in _modules().items():
        for name in _constants(tree):
            where[name].append(mod)
    twice = {name: mods for name, mods in where.items()
             if len(mods) > 1 and name not in SHARED_BY_PROTOCOL}
    assert not twice, ("ALL_CAPS constants assigned in more than one module (give the "
                       f"constant one home and import it, or give each its own name): {twice}")


def test_the_constants_that_had_two_homes_live_where_expected() -> None:
    modules = _modules()
    for name, home in HOMES.items():
        assert name in _constants(modules[home]), f"{name} is not defined in {home}"


def test_the_curator_and_review_queue_take_the_anchor_kinds_from_the_model() -> None:
    """The panels name no anchor kind list of their own (the curator's lacked "org")."""
    for mod in ("widgets/curator.py", "widgets/review.py"):
        tree = _modules()[mod]
        kinds = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Tuple | ast.List)
                 and {"person", "place"} <= {e.value for e in n.elts
                                             if isinstance(e, ast.Constant)}]
        assert not kinds, f"{mod} spells out anchor kinds: {kinds}"
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module == "model" for a in n.names}
        assert "ANCHOR_KINDS" in imported, mod


ENTRY_POINTS = {"main"}
"""Script entry points (``akasha``'s, ``python -m akasha_explorer.bench.engine``'s)."""


def test_public_functions_of_one_name_return_one_type() -> None:
    """Two public module functions of the same name (click commands and entry points aside)
    are read as one thing: they must at least return the same type (``messages_of_nodes``
    once returned an Arrow table in one module and a list of messages in another)."""
    returns: dict[str, dict[str, str]] = defaultdict(dict)
    for mod, tree in _modules().items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") \
                    and node.name not in ENTRY_POINTS and not _is_click_command(node):
                returns[node.name][mod] = ast.unparse(node.returns) if node.returns else "?"
    differ = {name: by for name, by in returns.items() if len(set(by.values())) > 1}
    assert not differ, f"functions of one name returning different types: {differ}"
