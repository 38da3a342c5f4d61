"""Standalone offline HTML of a view (SPEC §8, §9), built with pyvis.

pyvis holds the network (nodes, edges, options) and ships vis-network; its own page
template loads vis-network, Bootstrap and tom-select from CDNs, so the page here is ours:

- **nothing from the network**: the vis-network JavaScript and CSS that the installed
  pyvis package ships are read at run time and inlined (never vendored into this
  repository), and a Content-Security-Policy (``default-src 'none'``) forbids any load
  besides inline script/style and ``data:`` images;
- **every text a person wrote is escaped**: data goes in as JSON with ``<``, ``>``, ``&``
  and the JavaScript line separators escaped (no ``</script>`` can close the block);
  the title is HTML-escaped; node details are written with ``textContent`` and
  vis-network shows string tooltips with ``innerText`` — text stays text;
- positions come from the seeded igraph layout (:mod:`.viz`), physics off, colour by
  community, size by strength; a click shows the node's attributes and text preview;
  large views keep the ``max_edges`` strongest edges (noted on the page).

``window.akasha`` exposes ``{network, nodes, edges, showNode}`` to scripts and tests; the
body gets ``data-rendered="1"`` after the first drawing.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pyvis.network import Network

from ..analysis.views import GraphView, iso_time
from ..errors import StoreError
from .sanitize import records
from .viz import colour, layout, sizes

__all__ = ["render_html", "safe_json", "vis_assets", "write_html"]

_INFO = ("session", "time", "community", "kind", "type", "status", "sigma", "strength_eff",
         "long", "recall_count", "degree", "w_degree", "n_mentions", "flags")


def vis_assets() -> tuple[str, str]:
    """``(javascript, css)`` of the newest vis-network the installed pyvis ships."""
    lib = resources.files("pyvis").joinpath("lib")
    found = sorted((p for p in lib.iterdir() if p.name.startswith("vis-")),
                   key=lambda p: tuple(int(x) for x in p.name[4:].split(".") if x.isdigit()))
    if not found:
        raise StoreError("the installed pyvis ships no vis-network (pyvis/lib/vis-*); "
                         "reinstall pyvis>=0.3.2")
    d = found[-1]
    return (d.joinpath("vis-network.min.js").read_text("utf-8"),
            d.joinpath("vis-network.css").read_text("utf-8"))


def safe_json(obj: Any) -> str:
    """JSON that can sit inside ``<script>``: ``<``, ``>``, ``&``, U+2028 and U+2029 are
    escaped, so no text can end the script or start markup.

    >>> safe_json({"t": "</script><img src=x onerror=alert(1)>"})
    '{"t": "\\\\u003c/script\\\\u003e\\\\u003cimg src=x onerror=alert(1)\\\\u003e"}'
    """
    s = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(a, b)
    return s


def _network(view: GraphView, *, seed: int, max_edges: int) -> tuple[Network, int]:
    net = Network(height="100%", width="100%", directed=True)
    xy = layout(view, seed=seed)
    size = sizes(view)
    for i, (nid, attrs) in enumerate(records(view.nodes, key="id")):
        label = str(attrs.get("label") or nid)
        text = str(attrs.get("text") or attrs.get("label") or "")
        when = " · ".join(str(attrs[k]) for k in ("time", "session") if k in attrs)
        info = {k: attrs[k] for k in _INFO if k in attrs}
        net.add_node(str(nid), label=label, title=(when + "\n" + text).strip(),
                     x=float(xy[i, 0]), y=float(xy[i, 1]), size=float(size[i]),
                     color=colour(int(attrs.get("community", -1))), physics=False,
                     info={"id": str(nid), **info}, text=text)
    e = view.edges
    keep = np.arange(len(e))
    if len(e) > max_edges:
        keep = np.lexsort((keep, -e["weight"].to_numpy(np.float64)))[:max_edges]
        keep.sort()
    sub = e.iloc[keep]
    for (a, b), attrs in records(sub, key=("source", "target")):
        w = float(attrs.get("weight", 0.0))
        net.add_edge(str(a), str(b), value=w, title=f"{a} → {b}\nweight {w:.4g}")
    return net, len(e)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
<style>
html, body {{ margin: 0; height: 100%; font: 14px/1.4 system-ui, sans-serif; }}
body {{ display: grid; grid-template-columns: 1fr 22rem; grid-template-rows: auto 1fr; }}
header {{ grid-column: 1 / 3; padding: .4rem .8rem; border-bottom: 1px solid #ddd; }}
header h1 {{ font-size: 1.1rem; margin: 0; }} header p {{ margin: 0; color: #555; }}
#graph {{ min-height: 480px; }}
aside {{ border-left: 1px solid #ddd; padding: .5rem .8rem; overflow: auto; }}
dl {{ display: grid; grid-template-columns: auto 1fr; gap: 0 .6rem; margin: 0; }}
dt {{ color: #666; }} dd {{ margin: 0; word-break: break-all; }}
#text {{ white-space: pre-wrap; word-break: break-word; }}
#legend {{ list-style: none; padding: 0; }} #legend span {{ display: inline-block;
  width: .8rem; height: .8rem; margin-right: .4rem; border-radius: 50%; }}
</style>
</head>
<body>
<header><h1>{title}</h1><p>{subtitle}</p></header>
<div id="graph"></div>
<aside><h2>Node</h2><p id="hint">Click a node to see it.</p><dl id="details"></dl>
<p id="text"></p><h2>Communities</h2><ul id="legend"></ul></aside>
<script>{js}</script>
<script>
"use strict";
(function () {{
  const DATA = {data};
  const nodes = new vis.DataSet(DATA.nodes);
  const edges = new vis.DataSet(DATA.edges);
  const network = new vis.Network(document.getElementById("graph"),
                                  {{ nodes: nodes, edges: edges }}, DATA.options);
  function showNode(id) {{
    const n = nodes.get(id);
    if (!n) return;
    const dl = document.getElementById("details");
    dl.replaceChildren();
    for (const [k, v] of Object.entries(n.info)) {{
      const dt = document.createElement("dt"); dt.textContent = k;
      const dd = document.createElement("dd"); dd.textContent = String(v);
      dl.append(dt, dd);
    }}
    document.getElementById("hint").textContent = "";
    document.getElementById("text").textContent = n.text;
  }}
  const legend = document.getElementById("legend");
  for (const c of DATA.legend) {{
    const li = document.createElement("li");
    const dot = document.createElement("span"); dot.style.background = c.color;
    li.append(dot, document.createTextNode(c.text));
    legend.append(li);
  }}
  network.on("selectNode", function (p) {{ showNode(p.nodes[0]); }});
  network.once("afterDrawing", function () {{ document.body.dataset.rendered = "1"; }});
  window.akasha = {{ network: network, nodes: nodes, edges: edges, showNode: showNode }};
}})();
</script>
</body>
</html>
"""


def _legend(view: GraphView, labels: dict[int, str] | None) -> list[dict[str, str]]:
    if "community" not in view.nodes or view.nodes.empty:
        return []
    counts = view.nodes["community"].value_counts()
    out = []
    for c in sorted(int(x) for x in counts.index if int(x) >= 0)[:20]:
        name = (labels or {}).get(c, "")
        out.append({"color": colour(c),
                    "text": f"{c}: {counts[c]} nodes" + (f" — {name}" if name else "")})
    return out


def render_html(view: GraphView, *, title: str | None = None, seed: int = 0,
                max_edges: int = 5000, labels: dict[int, str] | None = None) -> str:
    """The page (see the module docstring) as a string.

    >>> import pandas as pd
    >>> v = GraphView("x", pd.DataFrame({"id": ["a"], "label": ["<b>hi</b>"]}),
    ...               pd.DataFrame(columns=["source", "target", "weight"]), False)
    >>> page = render_html(v, title="<i>t</i>")
    >>> "<b>hi</b>" in page, "&lt;i&gt;t&lt;/i&gt;" in page, "://" in page.split("<script>")[0]
    (False, True, False)
    """
    js, css = vis_assets()
    net, n_edges = _network(view, seed=seed, max_edges=max_edges)
    nodes, edges, _, _, _, _ = net.get_network_data()
    options = {
        "physics": {"enabled": False},
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": True},
        "nodes": {"shape": "dot", "font": {"size": 10}},
        "edges": {"arrows": {"to": {"enabled": view.directed, "scaleFactor": 0.4}},
                  "color": {"opacity": 0.35}, "smooth": False,
                  "scaling": {"min": 0.5, "max": 6}},
    }
    shown = len(edges)
    head = title or f"akasha — {view.name} view"
    sub = (f"{len(nodes)} nodes, {shown} of {n_edges} edges"
           + (" (the strongest)" if shown < n_edges else "")
           + (f"; weights as of {iso_time(view.now)}" if view.now else ""))
    data = {"nodes": nodes, "edges": edges, "options": options,
            "legend": _legend(view, labels)}
    return _PAGE.format(title=html.escape(head), subtitle=html.escape(sub), css=css, js=js,
                        data=safe_json(data))


def write_html(view: GraphView, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`render_html` to ``path``; returns the path."""
    out = Path(path)
    out.write_text(render_html(view, **kwargs), encoding="utf-8")
    return out
