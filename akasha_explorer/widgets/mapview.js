// akasha_explorer map view — the whole memory on one WebGL canvas (sigma.js + graphology).
//
// Render-only: Python (mapview.py) sends what to draw and what to light; this file draws it
// and reports clicks back. The library arrives as text in the `lib` trait (Python reads the
// ES module vendored in widgets/vendor/sigma.mjs) and is imported once per page from a
// blob: URL, so nothing is fetched from the network.
//
// Traits read: `data` (the items and edges, with positions, pixel sizes and colours, set
// once per map), `lit` (item id -> role: the hits of a search, their neighbours, a recall's
// seeds / delivered items / write-back), `lit_edges` (pairs of item ids drawn on top: a
// write-back's new links), `window` ([t0, t1] in seconds, or [] — items wholly outside are
// dimmed), `selected` (item ids, written here on click), `focus` ([id, token]: the camera
// moves to it), `height`. Changing any of them but `data` never rebuilds the graph: the
// reducers restyle what is drawn (sigma reprocesses every item's display data — about
// 0.1 s for 10k turns on a slow machine — but nothing is sent again or rebuilt).
//
// Labels: sigma picks candidates by its label grid (one per cell, larger first, lit items
// forced; every item of a small map); drawLabel below puts each right of its disc, else
// left of it, on the stage, where it touches no label already drawn in this frame (lit
// items' places are reserved first) — or drops it, so no two labels ever overlap. The boxes
// drawn last are on `el.akMap.labelBoxes` for the tests to measure.

const CACHE = "__akasha_sigma__";

function loadSigma(source) {
  if (!globalThis[CACHE]) {
    if (!source) throw new Error("map view: no sigma source was sent");
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    globalThis[CACHE] = import(url).finally(() => URL.revokeObjectURL(url));
  }
  return globalThis[CACHE];
}

const DIM = "#e4e4e4"; // an item outside the time window or away from what is lit
const DIM_EDGE = "#f0f0f0";
const LIT_EDGE = "#00a651"; // a write-back's links, in the written turn's colour
const LITE_ABOVE = 2000; // items above which the cheap programs draw the map
const FEW = 80; // up to this many items, every label is a candidate (not only the grid's)
const LABEL_PX = 12;
const LABEL_GAP = 3;
const ROLE_RANK = { selected: 0, written: 1, delivered: 2, seed: 3, hit: 4, near: 5 };
const ROLE_COLOUR = { // vivid, apart from the community palette (mapview.py LIT_COLOURS)
  hit: "#e6007e", near: "#f7a1cf", seed: "#0050ff", delivered: "#e6007e",
  written: "#00a651", selected: "#111111",
};

function overlaps(a, b) {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

function buildGraph(Graph, data) {
  const g = new Graph({ type: "undirected", multi: false, allowSelfLoops: false });
  const ids = data.ids || [];
  for (let i = 0; i < ids.length; i++) {
    g.addNode(ids[i], {
      x: data.x[i], y: data.y[i], size: data.size[i], color: data.color[i],
      label: data.label[i] || null, ts: data.ts[i], t0: (data.t0 || data.ts)[i], idx: i,
    });
  }
  const src = data.src || [], dst = data.dst || [];
  for (let k = 0; k < src.length; k++) {
    const a = ids[src[k]], b = ids[dst[k]];
    if (a === undefined || b === undefined || a === b || g.hasEdge(a, b)) continue;
    g.addEdge(a, b, { size: data.ew ? data.ew[k] : 0.5, color: data.ec || "#d0d0d0", s: a, t: b });
  }
  return g;
}

function softwareGL() {
  // whether this page's WebGL is a software rasteriser (SwiftShader, llvmpipe)
  try {
    const gl = document.createElement("canvas").getContext("webgl");
    const info = gl && gl.getExtension("WEBGL_debug_renderer_info");
    const name = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : "";
    gl?.getExtension("WEBGL_lose_context")?.loseContext();
    return /swiftshader|llvmpipe|software/i.test(name);
  } catch (err) {
    return false;
  }
}

async function render({ model, el }) {
  const t0 = performance.now();
  const root = document.createElement("div");
  root.className = "ak-map";
  const stage = document.createElement("div");
  stage.className = "ak-map-stage";
  const status = document.createElement("div");
  status.className = "ak-map-status";
  root.append(stage, status);
  el.append(root);
  stage.style.height = model.get("height") || "560px";

  let lib;
  try {
    lib = await loadSigma(model.get("lib"));
  } catch (err) {
    status.textContent = `map view: the sigma library did not load (${err})`;
    return () => {};
  }
  const { Sigma, Graph, EdgeLineProgram, NodePointProgram } = lib;

  const state = {
    lit: new Map(), litEdges: [], window: null, out: new Set(), any: false,
    labelBoxes: [], reserved: [], builds: 0, frames: 0, firstFrameMs: null,
  };
  const api = { state, get labelBoxes() { return state.labelBoxes; } };
  root.akMap = api;
  el.akMap = api;

  function readLit() {
    const lit = model.get("lit") || {};
    state.lit = new Map(Object.entries(lit));
    for (const id of model.get("selected") || []) state.lit.set(id, "selected");
    state.any = state.lit.size > 0;
    const w = model.get("window") || [];
    state.window = w.length === 2 ? w : null;
    state.litEdges = model.get("lit_edges") || [];
  }

  function markOutside() {
    // the items wholly outside the time window, once per change (the reducers look them up)
    state.out = new Set();
    const w = state.window;
    if (w === null) return;
    graph.forEachNode((n, d) => { if (d.ts < w[0] || d.t0 > w[1]) state.out.add(n); });
  }

  function labelBoxes(x, y, size, w) {
    // where a label may go: right of its disc, else left of it — on the stage only
    const top = y - LABEL_PX / 2 - 2, bottom = y + LABEL_PX / 2 + 2;
    if (top < 0 || bottom > stage.clientHeight) return [];
    const right = [x + size + LABEL_GAP - 1, top, x + size + LABEL_GAP + w + 1, bottom];
    const left = [x - size - LABEL_GAP - w - 1, top, x - size - LABEL_GAP + 1, bottom];
    return [right, left].filter((b) => b[0] >= 0 && b[2] <= stage.clientWidth);
  }

  function drawLabel(ctx, d, settings) {
    if (!d.label) return;
    ctx.font = `${settings.labelWeight} ${LABEL_PX}px ${settings.labelFont}`;
    const mine = state.reserved.find((r) => r[4] === d.key);
    const others = mine ? state.labelBoxes
      : state.labelBoxes.concat(state.reserved.filter((r) => r[4] !== d.key));
    const box = mine ? mine.slice(0, 4)
      : labelBoxes(d.x, d.y, d.size, ctx.measureText(d.label).width)
        .find((b) => !others.some((o) => overlaps(b, o)));
    if (!box || others.some((o) => overlaps(box, o))) return;
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255,255,255,0.9)";
    ctx.strokeText(d.label, box[0] + 1, d.y + LABEL_PX / 3);
    ctx.fillStyle = d.labelColor || "#222";
    ctx.fillText(d.label, box[0] + 1, d.y + LABEL_PX / 3);
    state.labelBoxes.push([...box, d.key]);
  }

  let graph = buildGraph(Graph, model.get("data") || {});
  let few = graph.order <= FEW;
  state.builds = 1;
  readLit();
  let neighbours = new Set();

  function programs(g) {
    // a big map, or any map on a software WebGL (no GPU, as in a headless browser), is
    // drawn with sigma's cheapest programs (points, 1 px lines): SwiftShader draws a
    // 10k-turn map about 5x faster so, a 1k-turn one about 3x (benchmarks/bench_map.py)
    const lite = software || g.order > LITE_ABOVE;
    return { defaultNodeType: lite ? "point" : "circle", defaultEdgeType: lite ? "line" : "rect",
             hideEdgesOnMove: g.size > 5000 };
  }

  function computeNeighbours() {
    // items next to a hit are drawn lit too (role "near" from Python wins if given)
    neighbours = new Set();
    for (const [id, role] of state.lit) {
      if (role === "hit" && graph.hasNode(id)) graph.forEachNeighbor(id, (n) => neighbours.add(n));
    }
  }
  computeNeighbours();
  markOutside();
  const software = softwareGL();
  root.dataset.software = software ? "1" : "0";

  const renderer = new Sigma(graph, stage, {
    allowInvalidContainer: true,
    renderEdgeLabels: false,
    labelFont: "system-ui, 'Noto Sans CJK SC', sans-serif",
    labelSize: LABEL_PX,
    labelWeight: "normal",
    labelDensity: 0.6,
    labelGridCellSize: 120,
    labelRenderedSizeThreshold: 4,
    defaultDrawNodeLabel: drawLabel,
    zIndex: true,
    minCameraRatio: 0.01,
    maxCameraRatio: 4,
    ...programs(graph),
    nodeProgramClasses: { circle: lib.NodeCircleProgram, point: NodePointProgram },
    edgeProgramClasses: { rect: lib.EdgeRectangleProgram, line: EdgeLineProgram },
    nodeReducer: (node, d) => {
      const role = state.lit.get(node);
      if (role) {
        return { ...d, color: ROLE_COLOUR[role] || d.color, zIndex: 10 - (ROLE_RANK[role] ?? 5),
                 size: d.size * (role === "near" ? 1.2 : 1.6), forceLabel: role !== "near",
                 labelColor: "#000" };
      }
      if (state.any && neighbours.has(node)) {
        return { ...d, color: ROLE_COLOUR.near, zIndex: 4, size: d.size * 1.2 };
      }
      if (state.any || state.out.has(node)) return { ...d, color: DIM, label: null, zIndex: 0 };
      return few ? { ...d, forceLabel: true } : d;
    },
    edgeReducer: (edge, d) => {
      if (d.lit) return { ...d, color: LIT_EDGE, size: Math.max(d.size, 2), zIndex: 3 };
      const a = d.s, b = d.t; // the ends, kept on the edge when it was made
      if (state.any) {
        const la = state.lit.has(a) || neighbours.has(a), lb = state.lit.has(b) || neighbours.has(b);
        if (!(la && lb)) return { ...d, color: DIM_EDGE, zIndex: 0 };
      } else if (state.window !== null && (state.out.has(a) || state.out.has(b))) {
        return { ...d, hidden: true };
      }
      return { ...d, zIndex: 1 };
    },
  });

  const overlay = new Set(); // lit edges added on top of the map's own
  const marked = new Set(); // the map's own edges that are lit
  function applyLitEdges() {
    for (const e of overlay) if (graph.hasEdge(e)) graph.dropEdge(e);
    overlay.clear();
    for (const e of marked) if (graph.hasEdge(e)) graph.removeEdgeAttribute(e, "lit");
    marked.clear();
    for (const [a, b] of state.litEdges) {
      if (!graph.hasNode(a) || !graph.hasNode(b) || a === b) continue;
      if (graph.hasEdge(a, b)) {
        const e = graph.edge(a, b);
        graph.setEdgeAttribute(e, "lit", true);
        marked.add(e);
        continue;
      }
      overlay.add(graph.addEdge(a, b, { size: 2, color: LIT_EDGE, lit: true, s: a, t: b }));
    }
  }

  const ctx = document.createElement("canvas").getContext("2d"); // measures reserved labels
  function reserve() {
    // boxes of the labels that must show (lit items) are claimed before the grid's
    state.labelBoxes = [];
    state.reserved = [];
    ctx.font = `normal ${LABEL_PX}px system-ui, 'Noto Sans CJK SC', sans-serif`;
    const ranked = [...state.lit.entries()].filter(([id, r]) => r !== "near" && graph.hasNode(id))
      .sort((p, q) => (ROLE_RANK[p[1]] ?? 9) - (ROLE_RANK[q[1]] ?? 9));
    for (const [id] of ranked) {
      const d = renderer.getNodeDisplayData(id);
      if (!d || !d.label) continue;
      const v = renderer.framedGraphToViewport(d);
      const size = renderer.scaleSize(d.size);
      const box = labelBoxes(v.x, v.y, size, ctx.measureText(d.label).width)
        .find((b) => !state.reserved.some((r) => overlaps(b, r)));
      if (box) state.reserved.push([...box, id]);
    }
  }

  renderer.on("beforeRender", reserve);
  renderer.on("afterRender", () => {
    state.frames += 1;
    if (state.firstFrameMs === null) {
      state.firstFrameMs = performance.now() - t0;
      root.dataset.firstFrameMs = state.firstFrameMs.toFixed(1);
    }
    root.dataset.frames = String(state.frames);
    root.dataset.labels = String(state.labelBoxes.length);
  });

  function describe() {
    const lit = [...state.lit.values()].filter((r) => r !== "selected").length;
    const n = graph.order;
    status.textContent = `${n.toLocaleString()} ${model.get("item_name") || "items"} · ` +
      `${(graph.size - overlay.size).toLocaleString()} links drawn` +
      (lit ? ` · ${lit} lit` : "") + (state.window ? " · time window on" : "");
    root.dataset.nodes = String(n);
    root.dataset.edges = String(graph.size - overlay.size);
    root.dataset.builds = String(state.builds);
  }

  function restyle() {
    readLit();
    computeNeighbours();
    markOutside();
    applyLitEdges();
    renderer.refresh();
    describe();
  }

  function rebuild() {
    graph = buildGraph(Graph, model.get("data") || {});
    few = graph.order <= FEW;
    state.builds += 1;
    overlay.clear();
    marked.clear();
    renderer.setGraph(graph);
    for (const [k, v] of Object.entries(programs(graph))) renderer.setSetting(k, v);
    readLit();
    computeNeighbours();
    markOutside();
    applyLitEdges();
    renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 });
    renderer.refresh();
    describe();
  }

  renderer.on("clickNode", ({ node, event }) => {
    const multi = event.original && (event.original.shiftKey || event.original.ctrlKey ||
                                      event.original.metaKey);
    const now = multi ? new Set(model.get("selected") || []) : new Set();
    if (multi && now.has(node)) now.delete(node);
    else now.add(node);
    model.set("selected", [...now]);
    model.save_changes();
  });
  renderer.on("doubleClickNode", ({ node, event }) => {
    event.preventSigmaDefault();
    model.send({ event: "open", id: node });
  });
  renderer.on("clickStage", () => {
    if ((model.get("selected") || []).length) {
      model.set("selected", []);
      model.save_changes();
    }
  });

  function onFocus() {
    const f = model.get("focus") || [];
    const id = f[0];
    if (id === "") {
      renderer.getCamera().animatedReset({ duration: 300 });
      return;
    }
    if (!id || !graph.hasNode(id)) return;
    const d = renderer.getNodeDisplayData(id);
    if (d) renderer.getCamera().animate({ x: d.x, y: d.y, ratio: Math.min(0.25, renderer.getCamera().ratio) },
                                        { duration: 300 });
  }

  const handlers = [
    ["change:data", rebuild], ["change:lit", restyle], ["change:lit_edges", restyle],
    ["change:window", restyle], ["change:selected", restyle], ["change:focus", onFocus],
    ["change:height", () => { stage.style.height = model.get("height"); renderer.resize(); renderer.refresh(); }],
  ];
  for (const [ev, fn] of handlers) model.on(ev, fn);
  // a notebook may render the map while its cell is hidden or off screen (no size yet):
  // draw again whenever the stage's size changes
  let size = [stage.clientWidth, stage.clientHeight];
  const resized = new ResizeObserver(() => {
    const now = [stage.clientWidth, stage.clientHeight];
    if (now[0] === size[0] && now[1] === size[1]) return;
    size = now;
    if (now[0] && now[1]) {
      renderer.resize();
      renderer.refresh({ skipIndexation: true });
    }
  });
  resized.observe(stage);
  applyLitEdges();
  renderer.refresh({ skipIndexation: true });
  describe();
  api.renderer = renderer;
  api.graph = () => graph;

  return () => {
    for (const [ev, fn] of handlers) model.off(ev, fn);
    resized.disconnect();
    renderer.kill();
  };
}

export default { render };
