// akasha_explorer graph view — renders the state Python sends, reports clicks back.
//
// The vis-network library arrives as text in the `vis_source` trait (read by Python from the
// installed pyvis package); it is evaluated once per page as a CommonJS module, so nothing is
// fetched from the network and no global `vis` is required. Positions are given by Python and
// physics stays off. Tooltips arrive as HTML that Python escaped; they become DOM elements
// here because vis-network shows plain strings as text.
//
// Legibility: the view is fitted by our own rule (fitView) — every node, its disc and its
// label (kept at LABEL_PX on screen whatever the zoom) inside the canvas, zoom at most
// MAX_ZOOM — and only when Python asks (fit_token) or the canvas first gets a size, so a
// panel that restyles nodes keeps one zoom. Labels that would overlap a more important one
// (lower `rank`) or run off the canvas are hidden (declutter); hover still shows every text.
// The legend (trait `legend`) is drawn under the caption: a swatch per entry, coloured through
// element styles (never parsed as HTML), and its text.

const CACHE = "__akasha_vis_network__";

function loadVis(source) {
  if (globalThis[CACHE]) return globalThis[CACHE];
  if (!source) throw new Error("graph view: no vis-network source was sent");
  const module = { exports: {} };
  // UMD bundle: with `exports` and `module` defined it fills module.exports.
  new Function("exports", "module", "define", source)(module.exports, module, undefined);
  globalThis[CACHE] = module.exports;
  return module.exports;
}

function tooltipElement(html) {
  const div = document.createElement("div");
  div.className = "ak-tip";
  div.innerHTML = html; // escaped by Python (akasha_explorer.widgets._html.tooltip)
  return div;
}

function prepNodes(list) {
  return list.map((n) => {
    const out = { ...n };
    if (typeof out.title === "string" && out.title) out.title = tooltipElement(out.title);
    else delete out.title;
    if (out.label === undefined) out.label = "";
    return out;
  });
}

const LABEL_PX = 12; // label text height on screen, at any zoom
const LABEL_GAP = 3; // screen px between a disc and its label
const LABEL_H = 16; // screen px a label line takes
const PAD = 8; // screen px kept free at the canvas edge
const MAX_ZOOM = 1.3; // a few nodes are not blown up into discs
const MAX_SIZE = 18; // canvas.py MAX_NODE_SIZE: a fit keeps room for a disc grown to the cap
const MIN_ZOOM = 0.02;

let measureCtx = null;
function textWidth(text) {
  if (!text) return 0;
  measureCtx ||= document.createElement("canvas").getContext("2d");
  measureCtx.font = `${LABEL_PX}px sans-serif`;
  return measureCtx.measureText(text).width + 4;
}

// Screen boxes of `items` ({x, y, r, w}: canvas position, radius, label width in px) at zoom
// `s`, relative to the canvas origin: [left, top, right, bottom].
function extent(items, s) {
  let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
  for (const it of items) {
    const half = Math.max(it.r * s, it.w / 2);
    l = Math.min(l, it.x * s - half);
    r = Math.max(r, it.x * s + half);
    t = Math.min(t, it.y * s - it.r * s);
    b = Math.max(b, it.y * s + it.r * s + (it.w ? LABEL_GAP + LABEL_H : 0));
  }
  return [l, t, r, b];
}

// The largest zoom (≤ MAX_ZOOM) at which every item fits in width × height, and the canvas
// point to centre on.
function fitFor(items, width, height) {
  const fits = (s) => {
    const [l, t, r, b] = extent(items, s);
    return r - l <= width - 2 * PAD && b - t <= height - 2 * PAD;
  };
  let lo = MIN_ZOOM, hi = MAX_ZOOM;
  if (fits(hi)) lo = hi;
  else {
    for (let k = 0; k < 40; k++) {
      const mid = (lo + hi) / 2;
      if (fits(mid)) lo = mid;
      else hi = mid;
    }
  }
  const [l, t, r, b] = extent(items, lo);
  return { scale: lo, position: { x: (l + r) / 2 / lo, y: (t + b) / 2 / lo } };
}

function prepEdges(list) {
  return list.map((e) => {
    const out = { ...e };
    if (typeof out.title === "string" && out.title) out.title = tooltipElement(out.title);
    else delete out.title;
    return out;
  });
}

function syncSet(dataset, items) {
  const keep = new Set(items.map((x) => x.id));
  const gone = dataset.getIds().filter((id) => !keep.has(id));
  if (gone.length) dataset.remove(gone);
  if (items.length) dataset.update(items);
}

const OPTIONS = {
  autoResize: true,
  physics: false,
  layout: { improvedLayout: false, randomSeed: 0 },
  interaction: {
    multiselect: true,
    hover: true,
    tooltipDelay: 120,
    hideEdgesOnDrag: true,
    navigationButtons: false,
    keyboard: false,
  },
  nodes: {
    shape: "dot",
    size: 10,
    borderWidth: 1,
    // a light backdrop keeps a label readable where it crosses edges or another disc
    font: { size: 14, face: "sans-serif", color: "#333", multi: false,
            background: "rgba(255,255,255,0.8)" },
    color: { background: "#4e79a7", border: "#2b4a6b" },
  },
  edges: {
    smooth: false,
    color: { color: "#c8c8c8", highlight: "#e15759", hover: "#888" },
    width: 1,
    arrows: { to: { enabled: true, scaleFactor: 0.35 } },
    selectionWidth: 1.5,
  },
};

// One swatch + text per legend entry ({kind, colour, text}); data-kind / data-colour say
// what it explains (tests read them).
function fillLegend(box, entries) {
  box.replaceChildren();
  for (const e of entries || []) {
    const item = document.createElement("span");
    item.className = "ak-legend-item";
    item.dataset.kind = e.kind;
    item.dataset.colour = e.colour || "";
    const sw = document.createElement("span");
    sw.className = `ak-swatch ak-swatch-${e.kind}`;
    if (e.kind === "fill" || e.kind === "marker") sw.style.background = e.colour;
    else if (e.kind === "ring") sw.style.borderColor = e.colour;
    else if (e.kind === "halo") sw.style.boxShadow = `0 0 4px 3px ${e.colour}`;
    else if (e.kind === "edge") sw.style.borderTopColor = e.colour;
    const text = document.createElement("span");
    text.textContent = e.text; // plain text
    item.append(sw, text);
    box.appendChild(item);
  }
  box.style.display = box.childElementCount ? "" : "none";
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "ak-graph";
  const caption = document.createElement("div");
  caption.className = "ak-graph-caption";
  const legend = document.createElement("div");
  legend.className = "ak-graph-legend";
  const holder = document.createElement("div");
  holder.className = "ak-graph-canvas";
  const status = document.createElement("div");
  status.className = "ak-graph-status";
  root.append(caption, legend, holder, status);
  el.appendChild(root);

  let vis;
  try {
    vis = loadVis(model.get("vis_source"));
  } catch (err) {
    status.textContent = `graph view could not start: ${err}`;
    root.dataset.error = String(err);
    return () => {};
  }

  const nodes = new vis.DataSet(prepNodes(model.get("nodes")));
  const edges = new vis.DataSet(prepEdges(model.get("edges")));
  holder.style.height = model.get("height");
  const network = new vis.Network(holder, { nodes, edges }, OPTIONS);
  root.akashaNetwork = network; // for tests and the curious: positions, selection

  // Labels keep LABEL_PX on screen whatever the zoom (vis-network scales them with it).
  const setLabelSize = () => {
    const size = Math.max(1, LABEL_PX / network.getScale());
    network.setOptions({ nodes: { font: { size } } });
  };

  // Python's labels; the DataSet holds what is drawn (some hidden by declutter).
  let labels = new Map();
  let ranks = new Map();
  const remember = (list) => {
    labels = new Map(list.map((n) => [String(n.id), n.label || ""]));
    ranks = new Map(list.map((n, k) => [String(n.id), typeof n.rank === "number" ? n.rank : k]));
  };
  remember(model.get("nodes"));

  // Hide each label that would overlap a more important one or leave the canvas.
  const declutter = () => {
    const w = holder.clientWidth, h = holder.clientHeight;
    if (!w || !h) return;
    const s = network.getScale();
    const ids = [...labels.keys()].filter((id) => labels.get(id) && nodes.get(id) !== null);
    ids.sort((a, b) => ranks.get(a) - ranks.get(b));
    const kept = [];
    const changes = [];
    for (const id of ids) {
      const text = labels.get(id);
      const p = network.canvasToDOM(network.getPosition(id));
      const r = (nodes.get(id).size ?? OPTIONS.nodes.size) * s;
      const tw = textWidth(text);
      const box = [p.x - tw / 2, p.y + r + LABEL_GAP, p.x + tw / 2, p.y + r + LABEL_GAP + LABEL_H];
      const inside = box[0] >= 0 && box[1] >= 0 && box[2] <= w && box[3] <= h;
      const clear = kept.every((k) => box[2] <= k[0] || box[0] >= k[2] || box[3] <= k[1] || box[1] >= k[3]);
      const show = inside && clear;
      if (show) kept.push(box);
      const want = show ? text : "";
      if ((nodes.get(id).label || "") !== want) changes.push({ id, label: want });
    }
    if (changes.length) nodes.update(changes);
    root.dataset.labels = String(kept.length);
  };
  let declutterFrame = 0;
  const declutterSoon = () => {
    if (declutterFrame) return;
    declutterFrame = requestAnimationFrame(() => {
      declutterFrame = 0;
      declutter();
    });
  };
  network.on("zoom", () => {
    setLabelSize();
    declutterSoon();
  });
  network.on("dragEnd", declutterSoon);

  const showCounts = () => {
    root.dataset.nodes = String(nodes.length);
    root.dataset.edges = String(edges.length);
    const sel = model.get("selected").length;
    status.textContent =
      `${nodes.length} nodes · ${edges.length} edges` +
      (sel ? ` · ${sel} selected` : "") +
      " · click to select, ctrl-click for several, double-click to expand";
  };
  const showCaption = () => {
    caption.textContent = model.get("caption"); // plain text, never HTML
    caption.style.display = model.get("caption") ? "" : "none";
  };

  const showLegend = () => fillLegend(legend, model.get("legend"));

  network.on("afterDrawing", () => {
    if (model.get("drawn") !== nodes.length) {
      model.set("drawn", nodes.length);
      model.save_changes();
    }
    root.dataset.drawn = String(nodes.length);
  });
  const reportSelection = () => {
    model.set("selected", network.getSelectedNodes().map(String));
    model.save_changes();
    showCounts();
  };
  network.on("select", reportSelection);
  network.on("doubleClick", (params) => {
    if (params.nodes && params.nodes.length) {
      model.send({ event: "expand", ids: params.nodes.map(String) });
    }
  });

  const onNodes = () => {
    remember(model.get("nodes"));
    syncSet(nodes, prepNodes(model.get("nodes")));
    showCounts();
    declutter();
  };
  const onEdges = () => {
    syncSet(edges, prepEdges(model.get("edges")));
    showCounts();
  };
  const onSelected = () => {
    const ids = model.get("selected").filter((id) => nodes.get(id) !== null);
    network.selectNodes(ids, false);
    showCounts();
  };
  let fitted = false;
  // Zoom so that the fit_ids nodes (default: all) fit with their discs and labels (a node's
  // `fit_label`, else its label, reserves the room).
  const fitNow = () => {
    let ids = model.get("fit_ids").filter((id) => nodes.get(id) !== null);
    if (!ids.length) ids = nodes.getIds();
    if (!ids.length) return;
    const pos = network.getPositions(ids);
    const items = ids.map((id) => {
      const n = nodes.get(id);
      const room = typeof n.fit_label === "string" ? n.fit_label : labels.get(String(id)) || "";
      // room for the largest disc the node may get later (a later stage restyles sizes
      // without a new fit: one zoom per recall)
      return { x: pos[id].x, y: pos[id].y, r: Math.max(n.size ?? OPTIONS.nodes.size, MAX_SIZE),
               w: textWidth(room) };
    });
    const { scale, position } = fitFor(items, holder.clientWidth, holder.clientHeight);
    network.moveTo({ position, scale, animation: false });
    setLabelSize();
    declutter();
    root.dataset.scale = scale.toFixed(4);
  };
  const onFit = () => {
    if (holder.clientWidth > 0) fitNow();
    else fitted = false;
  };
  const onHeight = () => {
    holder.style.height = model.get("height");
    network.redraw();
  };

  model.on("change:nodes", onNodes);
  model.on("change:edges", onEdges);
  model.on("change:selected", onSelected);
  model.on("change:caption", showCaption);
  model.on("change:legend", showLegend);
  model.on("change:fit_token", onFit);
  model.on("change:height", onHeight);
  showCaption();
  showLegend();
  showCounts();
  onSelected();
  // The element may not be in the page (or may have no width) when render runs: fit once it
  // first gets a real size, and again after a fit request that came while it had none.
  const resize = new ResizeObserver(() => {
    if (holder.clientWidth > 0 && holder.clientHeight > 0 && !fitted) {
      fitted = true;
      network.redraw();
      fitNow();
    } else if (fitted) {
      declutterSoon(); // a narrower canvas: labels that now leave it are hidden
    }
  });
  resize.observe(holder);

  return () => {
    model.off("change:nodes", onNodes);
    model.off("change:edges", onEdges);
    model.off("change:selected", onSelected);
    model.off("change:caption", showCaption);
    model.off("change:legend", showLegend);
    model.off("change:fit_token", onFit);
    model.off("change:height", onHeight);
    resize.disconnect();
    if (declutterFrame) cancelAnimationFrame(declutterFrame);
    network.destroy();
  };
}

export default { render };
