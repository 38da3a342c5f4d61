"""Reports of the recall benchmarks (:mod:`.recall`): JSON, a markdown page of tables and a
bar chart of recall@10 by category."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .recall import markdown_table

__all__ = ["write_reports"]

_TITLES = {"locomo": "LoCoMo evidence recall", "madial": "MADial-Bench-zh memory recall"}


def _categories(result: dict[str, Any]) -> list[str]:
    cats: dict[str, None] = {}
    for r in result["methods"].values():
        cats.update(dict.fromkeys(r["by_category"]))
    return [c for c in cats if c != "all"]


def write_reports(result: dict[str, Any], out: str | Path, *, command: str = "") -> list[Path]:
    """Write ``out`` (JSON), ``out.md`` (tables) and ``out.png`` (R@10 by category)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
    cats = _categories(result)
    title = _TITLES.get(result.get("benchmark", ""), "Recall")
    counts = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in result["counts"].items())
    own = json.dumps(result["settings"]) if result["settings"] else "none"
    md = [f"# {title} — {', '.join(result['corpora'])}", "",
          f"Command: `{command}`" if command else "",
          f"Profile **{result['profile']}** (settings changed on top of it: {own}); model "
          f"{result['model']}. {counts}. Total time {result['total_seconds']:.0f} s.", "",
          "## Methods", "", markdown_table(result["methods"], cats), ""]
    abl = result.get("ablations") or {}
    for method in ("context", "akasha"):
        rows = {name: by_m[method] for name, by_m in abl.items() if method in by_m}
        if rows:
            md += [f"## Ablations — `{method}` (one setting changed at query time on the same "
                   "store, except the rows that name a store of their own)", "",
                   markdown_table(rows, cats), ""]
    loss = result.get("where_evidence_is_lost", {}).get("overall")
    if loss:
        keys = [k for k in loss if k != "n"]
        md += ["## Where the engine loses the evidence (fraction of questions)", "",
               "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys),
               "| " + " | ".join(f"{loss[k]:.3f}" for k in keys) + " |", ""]
    md += ["## Ingest + replay per store (seconds)", "",
           "| store | nodes | edges | embed | ingest | replay |", "|---|---|---|---|---|---|"]
    for sid, t in result["ingest_seconds"].items():
        md.append(f"| {sid} | {t['nodes']:.0f} | {t['edges']:.0f} | {t['embed']:.1f} | "
                  f"{t['ingest']:.1f} | {t['replay']:.1f} |")
    md_path = out.with_suffix(".md")
    md_path.write_text("\n".join(md) + "\n", "utf-8")
    png = out.with_suffix(".png")
    _plot(result, png, title, cats)
    return [out, md_path, png]


def _plot(result: dict[str, Any], path: Path, title: str, cats: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(result["methods"])
    groups = ["overall", *cats]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        r = result["methods"][m]
        vals = [r["overall"]["recall@10"]] + [
            r["by_category"].get(c, {}).get("recall@10", 0.0) for c in cats]
        ax.bar(np.arange(len(groups)) + i * width, vals, width, label=m)
    ax.set_xticks(np.arange(len(groups)) + width * (len(methods) - 1) / 2, groups)
    ax.set_ylabel("recall@10 of evidence")
    ax.set_ylim(0, 1)
    ax.set_title(f"{title} (profile {result['profile']}): " + ", ".join(result["corpora"]))
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
