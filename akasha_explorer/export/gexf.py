"""GEXF 1.3 for Gephi (SPEC §9): attributes, colour by community, size, positions and
time intervals so Gephi's timeline works.

Streamed out element by element (networkx writes only the 1.1/1.2 drafts properly, and
an ElementTree of a 380k-edge graph is slow) and read back by
``networkx.read_gexf(path, version="1.3")``:

- ``<graph mode="dynamic" timeformat="double">``: times are epoch seconds (networkx
  cannot read ``dateTime``); each node has ``start`` = its turn's time (open-ended: a
  memory is never deleted by decay) and each edge ``start`` = its view column ``start``
  (for co-activation edges the later of the two turns) — so the timeline shows the graph
  growing. The view's own ``time`` column keeps the ISO date for people.
- ``<viz:color>`` by community, ``<viz:size>``, ``<viz:position>`` from
  :func:`~.viz.layout` (see :mod:`.viz`).
- every other node/edge column is a typed static attribute (``boolean``, ``long``,
  ``double``, ``string``; values cleaned by :mod:`.sanitize`, missing ones left out);
  ``label`` is the node's label, ``weight`` the edge's weight.
- the file is deterministic: the same view and seed give the same bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.views import GraphView
from .sanitize import clean_frame, xml_attr, xml_cdata, xml_key_columns
from .viz import colour, layout, rgb, sizes

__all__ = ["GEXF_NS", "NS_VIZ", "value_text", "write_gexf"]

GEXF_NS = "http://gexf.net/1.3"
NS_VIZ = "http://gexf.net/1.3/viz"
NS_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def value_text(v: Any) -> str:
    """A cleaned value as XML text: booleans ``true``/``false``, floats by ``repr`` (exact
    round trip).

    >>> value_text(True), value_text(0.1), value_text(3)
    ('true', '0.1', '3')
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def declare(cols: dict[str, list[Any]], skip: tuple[str, ...], prefix: str
            ) -> list[tuple[str, str, str]]:
    """``(id, column, type)`` of every column with values of one kind (cleaned columns
    have at most one), skipping ``skip``."""
    out: list[tuple[str, str, str]] = []
    for name, vals in cols.items():
        kinds = {type(v) for v in vals if v is not None}
        if name in skip or len(kinds) != 1:
            continue
        out.append((f"{prefix}{len(out)}", name, _TYPES[kinds.pop()]))
    return out


def _attvalues(decl: list[tuple[str, str, str]], cols: dict[str, list[Any]], i: int) -> str:
    parts = [f'<attvalue for="{aid}" value="{xml_attr(value_text(cols[name][i]))}"/>'
             for aid, name, _ in decl if cols[name][i] is not None]
    return f"<attvalues>{''.join(parts)}</attvalues>" if parts else ""


def write_gexf(view: GraphView, path: str | Path, *, seed: int = 0,
               positions: np.ndarray | None = None) -> Path:
    """Write ``view`` as GEXF 1.3 to ``path`` (see the module docstring); returns the path.

    >>> import pandas as pd, tempfile, networkx as nx
    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b"], "ts": [1.0, 2.0], "n": [1, 2]}),
    ...               pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [0.5],
    ...                             "start": [2.0]}), directed=True)
    >>> p = write_gexf(v, tempfile.mkdtemp() + "/g.gexf")
    >>> g = nx.read_gexf(p, version="1.3")
    >>> g.nodes["b"]["n"], g.nodes["b"]["start"], g.edges["a", "b"]["weight"]
    (2, 2.0, 0.5)
    """
    ncols = clean_frame(view.nodes, xml=True)
    ecols = clean_frame(view.edges, xml=True)
    xml_key_columns(view.nodes, ncols, view.edges, ecols)
    ndecl = declare(ncols, ("id", "label"), "n")
    edecl = declare(ecols, ("source", "target", "weight", "start"), "e")
    xy = layout(view, seed=seed) if positions is None else positions
    size = sizes(view)
    n, m = len(view.nodes), len(view.edges)
    at = dt.datetime.fromtimestamp(float(view.now or 0.0), dt.UTC)
    out = Path(path)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        w: Callable[[str], Any] = fh.write
        w("<?xml version='1.0' encoding='utf-8'?>\n")
        w(f'<gexf xmlns="{GEXF_NS}" xmlns:viz="{NS_VIZ}" xmlns:xsi="{NS_XSI}" '
          f'xsi:schemaLocation="{GEXF_NS} {GEXF_NS}/gexf.xsd" version="1.3">\n')
        w(f' <meta lastmodifieddate="{at.date().isoformat()}"><creator>akasha-explorer'
          f"</creator><description>{xml_cdata(f'akasha {view.name} view at ')}"
          f"{at.isoformat(timespec='seconds')}</description></meta>\n")
        kind = "directed" if view.directed else "undirected"
        w(f' <graph defaultedgetype="{kind}" mode="dynamic" timeformat="double">\n')
        for cls, decl in (("node", ndecl), ("edge", edecl)):
            w(f'  <attributes class="{cls}" mode="static">\n')
            for aid, name, typ in decl:
                w(f'   <attribute id="{aid}" title="{xml_attr(name)}" type="{typ}"/>\n')
            w("  </attributes>\n")
        w("  <nodes>\n")
        comm = ncols.get("community", [-1] * n)
        labels = ncols.get("label", [None] * n)
        ts = ncols.get("ts", [None] * n)
        for i in range(n):
            nid = str(ncols["id"][i])
            start = f' start="{ts[i]!r}"' if isinstance(ts[i], float) else ""
            r, g, b = rgb(colour(int(comm[i]) if comm[i] is not None else -1))
            w(f'   <node id="{xml_attr(nid)}" label="{xml_attr(str(labels[i] or nid))}"{start}>'
              f"{_attvalues(ndecl, ncols, i)}"
              f'<viz:color r="{r}" g="{g}" b="{b}" a="1.0"/>'
              f'<viz:position x="{float(xy[i, 0])!r}" y="{float(xy[i, 1])!r}" z="0.0"/>'
              f'<viz:size value="{float(size[i])!r}"/></node>\n')
        w("  </nodes>\n  <edges>\n")
        weight = ecols.get("weight", [None] * m)
        estart = ecols.get("start", [None] * m)
        for k in range(m):
            extra = f' weight="{weight[k]!r}"' if weight[k] is not None else ""
            if isinstance(estart[k], float):
                extra += f' start="{estart[k]!r}"'
            w(f'   <edge id="e{k}" source="{xml_attr(str(ecols["source"][k]))}" '
              f'target="{xml_attr(str(ecols["target"][k]))}"{extra}>'
              f"{_attvalues(edecl, ecols, k)}</edge>\n")
        w("  </edges>\n </graph>\n</gexf>\n")
    return out
