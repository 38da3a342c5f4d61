"""GEXF 1.3 for Gephi (SPEC §9): attributes, colour by community, size, positions and
time intervals so Gephi's timeline works.

Written with the standard library (networkx writes only the 1.1/1.2 drafts properly) and
read back by ``networkx.read_gexf(path, version="1.3")``:

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
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.views import GraphView
from .sanitize import clean_frame, xml_text
from .viz import colour, layout, rgb, sizes

__all__ = ["NS", "NS_VIZ", "write_gexf"]

NS = "http://gexf.net/1.3"
NS_VIZ = "http://gexf.net/1.3/viz"
NS_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def _num(v: float) -> str:
    return repr(float(v))


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _num(v)
    return str(v)


def _declare(parent: ET.Element, cls: str, cols: dict[str, list[Any]],
             skip: tuple[str, ...]) -> list[tuple[str, str]]:
    """``<attributes>`` for the columns of one class; returns ``(id, column)`` pairs."""
    block = ET.SubElement(parent, f"{{{NS}}}attributes", {"class": cls, "mode": "static"})
    out = []
    for name, vals in cols.items():
        kinds = {type(v) for v in vals if v is not None}
        if name in skip or len(kinds) != 1:
            continue
        aid = f"{cls[0]}{len(out)}"
        ET.SubElement(block, f"{{{NS}}}attribute",
                      {"id": aid, "title": xml_text(name), "type": _TYPES[kinds.pop()]})
        out.append((aid, name))
    return out


def _attvalues(el: ET.Element, decl: list[tuple[str, str]], cols: dict[str, list[Any]],
               i: int) -> None:
    vals = [(aid, cols[name][i]) for aid, name in decl if cols[name][i] is not None]
    if vals:
        box = ET.SubElement(el, f"{{{NS}}}attvalues")
        for aid, v in vals:
            ET.SubElement(box, f"{{{NS}}}attvalue", {"for": aid, "value": _value(v)})


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
    ET.register_namespace("", NS)
    ET.register_namespace("viz", NS_VIZ)
    ET.register_namespace("xsi", NS_XSI)
    root = ET.Element(f"{{{NS}}}gexf", {
        "version": "1.3", f"{{{NS_XSI}}}schemaLocation": f"{NS} {NS}/gexf.xsd"})
    at = dt.datetime.fromtimestamp(float(view.now or 0.0), dt.UTC)
    meta = ET.SubElement(root, f"{{{NS}}}meta", {"lastmodifieddate": at.date().isoformat()})
    ET.SubElement(meta, f"{{{NS}}}creator").text = "akasha-explorer"
    ET.SubElement(meta, f"{{{NS}}}description").text = (
        f"akasha {view.name} view at {at.isoformat(timespec='seconds')}")
    graph = ET.SubElement(root, f"{{{NS}}}graph", {
        "defaultedgetype": "directed" if view.directed else "undirected",
        "mode": "dynamic", "timeformat": "double"})
    ncols = clean_frame(view.nodes, xml=True)
    ecols = clean_frame(view.edges, xml=True)
    ndecl = _declare(graph, "node", ncols, ("id", "label"))
    edecl = _declare(graph, "edge", ecols, ("source", "target", "weight", "start"))
    xy = layout(view, seed=seed) if positions is None else positions
    size = sizes(view)
    comm = ncols.get("community", [-1] * len(view.nodes))
    nodes_el = ET.SubElement(graph, f"{{{NS}}}nodes")
    for i, nid in enumerate(ncols["id"] if len(view.nodes) else []):
        attrs = {"id": str(nid), "label": str(ncols.get("label", ncols["id"])[i] or nid)}
        if "ts" in ncols and isinstance(ncols["ts"][i], float):
            attrs["start"] = _num(ncols["ts"][i])
        el = ET.SubElement(nodes_el, f"{{{NS}}}node", attrs)
        _attvalues(el, ndecl, ncols, i)
        r, g, b = rgb(colour(int(comm[i]) if comm[i] is not None else -1))
        ET.SubElement(el, f"{{{NS_VIZ}}}color", {"r": str(r), "g": str(g), "b": str(b),
                                                 "a": "1.0"})
        ET.SubElement(el, f"{{{NS_VIZ}}}position", {"x": _num(xy[i, 0]), "y": _num(xy[i, 1]),
                                                    "z": "0.0"})
        ET.SubElement(el, f"{{{NS_VIZ}}}size", {"value": _num(size[i])})
    edges_el = ET.SubElement(graph, f"{{{NS}}}edges")
    for k in range(len(view.edges)):
        attrs = {"id": f"e{k}", "source": str(ecols["source"][k]),
                 "target": str(ecols["target"][k])}
        if "weight" in ecols and ecols["weight"][k] is not None:
            attrs["weight"] = _num(ecols["weight"][k])
        if "start" in ecols and isinstance(ecols["start"][k], float):
            attrs["start"] = _num(ecols["start"][k])
        el = ET.SubElement(edges_el, f"{{{NS}}}edge", attrs)
        _attvalues(el, edecl, ecols, k)
    tree = ET.ElementTree(root)
    ET.indent(tree, space=" ")
    out = Path(path)
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return out
