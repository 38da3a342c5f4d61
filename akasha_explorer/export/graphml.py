"""GraphML for Gephi, Cytoscape and yEd (SPEC §9), streamed out element by element.

Node and edge columns become typed ``<key>`` declarations (``boolean``, ``long``,
``double``, ``string``; values cleaned by :mod:`.sanitize`, missing ones left out), plus
``x``, ``y``, ``size``, ``r``, ``g``, ``b`` node attributes, which Gephi's GraphML
importer reads as position, size and colour, and the graph attributes ``view`` and
``now``. ``networkx.read_graphml`` reads it back with equal nodes, edges and attributes.
The same view and seed give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.views import GraphView
from .formats import with_viz
from .gexf import declare, value_text
from .sanitize import clean_frame, xml_attr, xml_cdata, xml_key_columns

__all__ = ["GRAPHML_NS", "write_graphml"]

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"


def _data(decl: list[tuple[str, str, str]], cols: dict[str, list[Any]], i: int) -> str:
    return "".join(f'<data key="{kid}">{xml_cdata(value_text(cols[name][i]))}</data>'
                   for kid, name, _ in decl if cols[name][i] is not None)


def write_graphml(view: GraphView, path: str | Path, *, seed: int = 0) -> Path:
    """Write ``view`` as GraphML (see the module docstring); returns the path.

    >>> import tempfile, pandas as pd, networkx as nx
    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b"], "flags": [["noise"], None]}),
    ...               pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [0.5]}), False)
    >>> g = nx.read_graphml(write_graphml(v, tempfile.mkdtemp() + "/g.graphml"))
    >>> g.nodes["a"]["flags"], "flags" in g.nodes["b"], g.edges["a", "b"]["weight"]
    ('noise', False, 0.5)
    """
    viz = with_viz(view, seed=seed)
    ncols = clean_frame(viz.nodes, xml=True)
    ecols = clean_frame(viz.edges, xml=True)
    xml_key_columns(viz.nodes, ncols, viz.edges, ecols)
    ndecl = declare(ncols, ("id",), "n")
    edecl = declare(ecols, ("source", "target"), "e")
    out = Path(path)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        w = fh.write
        w("<?xml version='1.0' encoding='utf-8'?>\n")
        w(f'<graphml xmlns="{GRAPHML_NS}" xmlns:xsi="{_XSI}" '
          f'xsi:schemaLocation="{GRAPHML_NS} {GRAPHML_NS}/1.0/graphml.xsd">\n')
        w(' <key id="g0" for="graph" attr.name="view" attr.type="string"/>\n')
        w(' <key id="g1" for="graph" attr.name="now" attr.type="double"/>\n')
        for cls, decl in (("node", ndecl), ("edge", edecl)):
            for kid, name, typ in decl:
                w(f' <key id="{kid}" for="{cls}" attr.name="{xml_attr(name)}" '
                  f'attr.type="{typ}"/>\n')
        kind = "directed" if view.directed else "undirected"
        w(f' <graph edgedefault="{kind}">\n')
        w(f'  <data key="g0">{xml_cdata(view.name)}</data>'
          f'<data key="g1">{float(view.now or 0.0)!r}</data>\n')
        for i, nid in enumerate(ncols["id"]):
            w(f'  <node id="{xml_attr(str(nid))}">{_data(ndecl, ncols, i)}</node>\n')
        for k in range(len(view.edges)):
            w(f'  <edge source="{xml_attr(str(ecols["source"][k]))}" '
              f'target="{xml_attr(str(ecols["target"][k]))}">{_data(edecl, ecols, k)}</edge>\n')
        w(" </graph>\n</graphml>\n")
    return out
