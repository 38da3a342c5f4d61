// akasha_explorer graph view — renders the state Python sends, reports clicks back.
//
// The vis-network library arrives as text in the `vis_source` trait (read by Python from the
// installed pyvis package); it is evaluated once per page as a CommonJS module, so nothing is
// fetched from the network and no global `vis` is required. Positions are given by Python and
// physics stays off. Tooltips arrive as HTML that Python escaped; they become DOM elements
// here because vis-network shows plain strings as text.

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
    return out;
  });
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
    font: { size: 14, face: "sans-serif", color: "#333", multi: false },
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

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "ak-graph";
  const caption = document.createElement("div");
  caption.className = "ak-graph-caption";
  const holder = document.createElement("div");
  holder.className = "ak-graph-canvas";
  const status = document.createElement("div");
  status.className = "ak-graph-status";
  root.append(caption, holder, status);
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

  // Labels keep about LABEL_PX on screen whatever the zoom (vis-network 9 scales them).
  const LABEL_PX = 12;
  let labelFrame = 0;
  const keepLabelSize = () => {
    if (labelFrame) return;
    labelFrame = requestAnimationFrame(() => {
      labelFrame = 0;
      const size = Math.max(4, Math.min(40, LABEL_PX / network.getScale()));
      network.setOptions({ nodes: { font: { size } } });
    });
  };
  network.on("zoom", keepLabelSize);

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
    syncSet(nodes, prepNodes(model.get("nodes")));
    showCounts();
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
  const fitNow = () => {
    const ids = model.get("fit_ids").filter((id) => nodes.get(id) !== null);
    // vis-network never zooms in past maxZoomLevel (default 1) when fitting
    const opts = { animation: false, maxZoomLevel: 2.5 };
    network.fit(ids.length ? { ...opts, nodes: ids } : opts);
    keepLabelSize();
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
  model.on("change:fit_token", onFit);
  model.on("change:height", onHeight);
  showCaption();
  showCounts();
  onSelected();
  // The element may not be in the page (or may have no width) when render runs: fit once it
  // first gets a real size, and again after a fit request that came while it had none.
  const resize = new ResizeObserver(() => {
    if (holder.clientWidth > 0 && holder.clientHeight > 0 && !fitted) {
      fitted = true;
      network.redraw();
      fitNow();
    }
  });
  resize.observe(holder);

  return () => {
    model.off("change:nodes", onNodes);
    model.off("change:edges", onEdges);
    model.off("change:selected", onSelected);
    model.off("change:caption", showCaption);
    model.off("change:fit_token", onFit);
    model.off("change:height", onHeight);
    resize.disconnect();
    if (labelFrame) cancelAnimationFrame(labelFrame);
    network.destroy();
  };
}

export default { render };
