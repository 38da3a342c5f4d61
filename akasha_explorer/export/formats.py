"""Node-link JSON, Parquet and CSV exports of a view (SPEC §9), and the visual columns the
GraphML export adds (:func:`with_viz`).

- **node-link JSON**: ``networkx.node_link_data`` (``nodes`` / ``edges``), UTF-8, no NaN.
- **Parquet / CSV**: ``nodes`` and ``edges`` tables in a folder, every column as is.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..analysis.views import GraphView
from .viz import colour, layout, rgb, sizes

__all__ = ["with_viz", "write_csv", "write_json", "write_parquet"]


def with_viz(view: GraphView, *, seed: int = 0) -> GraphView:
    """The view with ``x``, ``y`` (layout), ``size`` and ``r``, ``g``, ``b`` (community
    colour) node columns added."""
    from dataclasses import replace

    f = view.nodes.copy()
    xy = layout(view, seed=seed)
    f["x"], f["y"], f["size"] = xy[:, 0], xy[:, 1], sizes(view)
    comm = f["community"].to_numpy(np.int64) if "community" in f else np.full(len(f), -1)
    cols = np.array([rgb(colour(int(c))) for c in comm], np.int64).reshape(-1, 3)
    f["r"], f["g"], f["b"] = cols[:, 0], cols[:, 1], cols[:, 2]
    return replace(view, nodes=f)


def write_json(view: GraphView, path: str | Path) -> Path:
    """Write ``view`` as node-link JSON (``networkx.node_link_graph`` reads it back).

    >>> import tempfile, pandas as pd
    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b"]}),
    ...               pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [0.5]}), True)
    >>> p = write_json(v, tempfile.mkdtemp() + "/g.json")
    >>> g = nx.node_link_graph(json.loads(p.read_text()), edges="edges")
    >>> sorted(g.edges(data="weight"))
    [('a', 'b', 0.5)]
    """
    out = Path(path)
    data = nx.node_link_data(view.to_networkx(), edges="edges")
    out.write_text(json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1) + "\n",
                   encoding="utf-8")
    return out


def _tables(view: GraphView, folder: str | Path) -> Path:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_parquet(view: GraphView, folder: str | Path) -> Path:
    """``nodes.parquet`` and ``edges.parquet`` in ``folder``; returns the folder."""
    out = _tables(view, folder)
    view.nodes.to_parquet(out / "nodes.parquet", index=False)
    view.edges.to_parquet(out / "edges.parquet", index=False)
    return out


def write_csv(view: GraphView, folder: str | Path) -> Path:
    """``nodes.csv`` and ``edges.csv`` (UTF-8) in ``folder``; returns the folder. Text
    cells that start like a spreadsheet formula — also after leading whitespace, and in
    fullwidth forms — get a leading ``'`` (:func:`_formula_safe`).

    >>> import tempfile, pandas as pd
    >>> v = GraphView("x", pd.DataFrame({"id": ["阿岚"]}), pd.DataFrame(
    ...     columns=["source", "target", "weight"]), False)
    >>> pd.read_csv(write_csv(v, tempfile.mkdtemp()) / "nodes.csv")["id"].tolist()
    ['阿岚']
    """
    out = _tables(view, folder)
    _formula_safe(view.nodes).to_csv(out / "nodes.csv", index=False, encoding="utf-8")
    _formula_safe(view.edges).to_csv(out / "edges.csv", index=False, encoding="utf-8")
    return out


_FORMULA = ("=", "+", "-", "@")
_CONTROL_START = ("\t", "\r", "\n")


def _formula_like(v: str) -> bool:
    """Would a spreadsheet read the cell ``v`` as a formula? Decision (issue 18): defuse
    when, after any leading whitespace (spaces, newlines, ideographic space — some
    programs trim it), the first character is ``=``, ``+``, ``-`` or ``@`` *in any width*
    (``＝`` and ``﹦`` are read as ``=`` by spreadsheets with an East-Asian input locale:
    the first character is compared after NFKC), or the cell starts with a tab, CR or LF.
    Erring on the side of a harmless ``'``: a text cell like ``-3`` also gets one.

    >>> [_formula_like(v) for v in ["=1", " =1", "\\n@x", "＝1+1", "\\t1", "a=1", "3-1"]]
    [True, True, True, True, True, False, False]
    """
    if v.startswith(_CONTROL_START):
        return True
    head = v.lstrip()[:1]
    return bool(head) and unicodedata.normalize("NFKC", head).startswith(_FORMULA)


def _formula_safe(df: Any) -> Any:
    """Text cells a spreadsheet would run as a formula (:func:`_formula_like`:
    ``=cmd|' /C calc'!A0``, ``+…``, ``-…``, ``@…``, also after leading whitespace and in
    fullwidth forms) get a leading ``'`` (OWASP CSV injection advice) — in the CSV copy
    only; numbers and the stored text are untouched.

    >>> import pandas as pd
    >>> f = _formula_safe(pd.DataFrame({"t": ["=1+2", "ok", " ＠SUM(A1)"], "n": [-1, 2, 3]}))
    >>> f["t"].tolist(), f["n"].tolist()
    (["'=1+2", 'ok', "' ＠SUM(A1)"], [-1, 2, 3])
    """
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or str(out[c].dtype) in ("string", "str"):
            out[c] = [f"'{v}" if isinstance(v, str) and _formula_like(v) else v
                      for v in out[c]]
    return out
