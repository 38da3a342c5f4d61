"""HTML pieces the panels show: every text a person wrote is escaped here, once, before it
reaches a page (SPEC §8). Pure functions of plain values; no widget, no store.

>>> tooltip("2026-09-01:0", "<b>hi</b> & bye")
'<b>2026-09-01:0</b><br>&lt;b&gt;hi&lt;/b&gt; &amp; bye'
>>> community_colour(0), community_colour(None)
('#4e79a7', '#b0b0b0')
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PALETTE",
    "STYLE",
    "UNKNOWN_COLOUR",
    "community_colour",
    "esc",
    "frame_html",
    "iso",
    "kv_html",
    "legend_html",
    "messages_html",
    "note",
    "short",
    "stamp",
    "table",
    "text_first",
    "timeline_svg",
    "tooltip",
]

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#8cd17d", "#499894", "#d37295", "#86bcb6", "#f1ce63")
"""Community colours (Tableau 20, the distinguishable half), reused round-robin."""

UNKNOWN_COLOUR = "#b0b0b0"


def esc(text: object) -> str:
    """HTML-escape any value's text (quotes too).

    >>> esc('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    return html.escape("" if text is None else str(text), quote=True)


def short(text: str | None, n: int = 40) -> str:
    """One line of at most ``n`` characters (whitespace collapsed, ``…`` when cut).

    >>> short("a  b\\n c", 10), short("x" * 12, 5)
    ('a b c', 'xxxx…')
    """
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: max(0, n - 1)] + "…"


def iso(ts: float | None, *, minutes: bool = True) -> str:
    """UTC time of epoch seconds, e.g. ``2026-09-01 08:07``.

    >>> iso(0.0), iso(86400.0, minutes=False), iso(None)
    ('1970-01-01 00:00', '1970-01-02', '')
    """
    if ts is None or not math.isfinite(ts):
        return ""
    d = dt.datetime.fromtimestamp(float(ts), dt.UTC)
    return d.strftime("%Y-%m-%d %H:%M" if minutes else "%Y-%m-%d")


def stamp(ts: float) -> str:
    """Epoch seconds as an exact ISO 8601 time a person can read and a "now" box parses
    back (UTC; microseconds only when there are some).

    >>> stamp(1792505265.0), stamp(0.25)
    ('2026-10-20T14:07:45+00:00', '1970-01-01T00:00:00.250000+00:00')
    """
    d = dt.datetime.fromtimestamp(float(ts), dt.UTC)
    return d.isoformat(timespec="seconds" if d.microsecond == 0 else "microseconds")


def community_colour(k: int | None) -> str:
    """Colour of community ``k`` (grey when unknown or negative).

    >>> community_colour(len(PALETTE)) == community_colour(0)
    True
    """
    if k is None or k < 0:
        return UNKNOWN_COLOUR
    return PALETTE[int(k) % len(PALETTE)]


def tooltip(title: str, *lines: str) -> str:
    """A tooltip as safe HTML: the bold title and each line, all escaped.

    >>> tooltip("a<b", "c")
    '<b>a&lt;b</b><br>c'
    """
    return "<br>".join([f"<b>{esc(title)}</b>", *(esc(x) for x in lines if x)])


def _cell(v: Any, digits: int) -> str:
    if v is None or (not isinstance(v, list | tuple | str) and _missing(v)):
        return ""
    if isinstance(v, bool):
        return "✓" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.{digits}f}"
    if v is None:
        return ""
    if isinstance(v, list | tuple):
        return esc(", ".join(str(x) for x in v))
    return esc(v)


def _missing(v: Any) -> bool:
    try:
        import pandas as pd
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


TEXT_COLUMNS = ("text", "subject_text", "other_text", "label", "examples", "detail", "why",
                "name", "surface", "query", "quote", "reason")
"""Columns that hold what a person wrote or reads: shown first, at least ``TEXT_MIN_EM``
wide, cut with an ellipsis (the full text on hover)."""

TEXT_MIN_EM = 14
TEXT_MAX_EM = 30


def text_first(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its text columns moved to the front, in :data:`TEXT_COLUMNS` order.

    >>> import pandas as pd
    >>> list(text_first(pd.DataFrame(columns=["uid", "reason", "score", "text"])).columns)
    ['text', 'reason', 'uid', 'score']
    """
    cols = list(df.columns)
    first = [c for c in TEXT_COLUMNS if c in cols]
    return df[first + [c for c in cols if c not in first]] if first else df


def frame_html(df: pd.DataFrame, *, digits: int = 3, max_rows: int = 400,
               highlight: Iterable[str] = (), key: str = "uid") -> str:
    """A DataFrame as a compact, scrollable HTML table; every cell escaped.

    Text columns come first, at least 14em wide, one line each, cut with an ellipsis and
    whole in the cell's ``title`` (hover). Rows whose ``key`` is in ``highlight`` get the
    ``ak-hl`` class.

    >>> import pandas as pd
    >>> s = frame_html(pd.DataFrame({"uid": ["<x>"], "score": [0.12345], "text": ["a&b"]}))
    >>> "&lt;x&gt;" in s and "0.123" in s and "<x>" not in s
    True
    >>> s.index(">text</th>") < s.index(">uid</th>"), 'title="a&amp;b"' in s
    (True, True)
    """
    hl = set(highlight)
    df = text_first(df)
    cols = list(df.columns)
    is_text = [c in TEXT_COLUMNS for c in cols]
    head = "".join(f'<th class="ak-t">{esc(c)}</th>' if t else f"<th>{esc(c)}</th>"
                   for c, t in zip(cols, is_text, strict=True))
    body = []
    for rec in df.head(max_rows).itertuples(index=False, name=None):
        row = dict(zip(cols, rec, strict=True))
        cls = ' class="ak-hl"' if key in row and row[key] in hl else ""
        cells = "".join(f'<td class="ak-t" title="{_cell(v, digits)}">{_cell(v, digits)}</td>'
                        if t else f"<td>{_cell(v, digits)}</td>"
                        for v, t in zip(rec, is_text, strict=True))
        body.append(f"<tr{cls}>{cells}</tr>")
    more = (f'<div class="ak-more">{len(df) - max_rows} more rows not shown; use the '
            "DataFrame (frame()) for all</div>" if len(df) > max_rows else "")
    return (f'<div class="ak-table"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>{more}</div>')


def messages_html(messages: Sequence[Any]) -> str:
    """Verbatim messages (objects with ``ts``, ``role``, ``speaker``, ``text``, ``flags``) as
    escaped HTML, each under who said it — the stored speaker, the role only when there is
    none (the role on hover); line breaks kept with ``white-space: pre-wrap``.

    >>> from types import SimpleNamespace as M
    >>> s = messages_html([M(ts=0.0, role="user", speaker="Ann", text="<i>x</i>", flags=())])
    >>> "&lt;i&gt;x&lt;/i&gt;" in s, '<span title="role: user">Ann</span>' in s
    (True, True)
    >>> '· <span title="role: user">user</span>' in messages_html(
    ...     [M(ts=0.0, role="user", speaker=None, text="x", flags=())])
    True
    """
    out = []
    for m in messages:
        flags = f' <span class="ak-flag">[{esc(", ".join(m.flags))}]</span>' if m.flags else ""
        who = f'<span title="role: {esc(m.role)}">{esc(m.speaker or m.role)}</span>'
        out.append(f'<div class="ak-msg ak-{esc(m.role)}"><div class="ak-meta">{esc(iso(m.ts))} '
                   f"· {who}{flags}</div>"
                   f'<div class="ak-text">{esc(m.text)}</div></div>')
    return "".join(out) or "<i>no messages</i>"


def timeline_svg(ts: Sequence[float], *, marks: Sequence[float] = (), width: int = 640,
                 height: int = 60, bins: int = 60) -> str:
    """An inline SVG histogram of node times (no JavaScript, nothing fetched), with optional
    vertical marks (e.g. the open node). Axis labels are dates (escaped).

    >>> s = timeline_svg([0.0, 86400.0, 86400.0], marks=[86400.0])
    >>> s.startswith("<svg") and s.count("<rect") >= 2 and "ak-mark" in s
    True
    >>> timeline_svg([])
    '<svg width="640" height="60"></svg>'
    """
    if not len(ts):
        return f'<svg width="{width}" height="{height}"></svg>'
    lo, hi = float(min(ts)), float(max(ts))
    span = max(hi - lo, 1.0)
    counts = [0] * bins
    for t in ts:
        counts[min(bins - 1, int((float(t) - lo) / span * bins))] += 1
    top = max(counts)
    plot_h = height - 14
    bw = width / bins
    bars = []
    for k, c in enumerate(counts):
        if c:
            h = max(1.0, plot_h * c / top)
            bars.append(f'<rect x="{k * bw:.1f}" y="{plot_h - h:.1f}" width="{max(bw - 1, 1):.1f}"'
                        f' height="{h:.1f}" fill="#4e79a7"><title>{c}</title></rect>')
    for t in marks:
        x = (float(t) - lo) / span * width
        bars.append(f'<line class="ak-mark" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{plot_h}" '
                    'stroke="#e15759" stroke-width="2"/>')
    labels = (f'<text x="0" y="{height - 2}" font-size="10">{esc(iso(lo, minutes=False))}</text>'
              f'<text x="{width}" y="{height - 2}" font-size="10" text-anchor="end">'
              f"{esc(iso(hi, minutes=False))}</text>")
    return f'<svg width="{width}" height="{height}">{"".join(bars)}{labels}</svg>'


STYLE = """<style>
.ak-wide, .ak-wide .widget-html-content { width: 100%; min-width: 0; overflow: hidden; }
.ak-table { max-height: 340px; max-width: 100%; overflow: auto; border: 1px solid #ddd;
  font-size: 12px; }
.ak-table table { border-collapse: collapse; width: max-content; }
.ak-table th { position: sticky; top: 0; background: #f4f4f4; z-index: 1; }
.ak-table th, .ak-table td { padding: 2px 6px; border-bottom: 1px solid #eee; text-align: left;
  max-width: 360px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ak-table th.ak-t, .ak-table td.ak-t { min-width: 14em; max-width: 30em; }
.ak-table tr.ak-hl td { background: #fff3c4; }
.ak-panel .widget-button, .ak-panel .widget-toggle-button { flex-shrink: 0;
  min-width: max-content; }
.ak-more, .ak-note { font-size: 11px; color: #777; padding: 2px 4px; }
.ak-msg { margin: 4px 0; padding: 4px 6px; border-left: 3px solid #4e79a7; background: #fafafa; }
.ak-msg.ak-assistant { border-left-color: #59a14f; }
.ak-meta { font-size: 11px; color: #666; }
.ak-text { white-space: pre-wrap; font-size: 13px; }
.ak-flag { color: #e15759; }
.ak-caption { font-size: 13px; padding: 4px 0; }
.ak-kv td { padding: 1px 6px; font-size: 12px; }
.ak-error { color: #b00020; }
</style>"""
"""Styles for the panels' HTML (inline, nothing fetched)."""


def table(df: pd.DataFrame, *, digits: int = 3) -> Any:
    """``df`` ready to read in a notebook (a pandas ``Styler``; the data is ``.data``): text
    columns first, each at least 14em wide, cut with an ellipsis and whole on hover, every
    row on one line (a wide frame scrolls sideways, the text in view), numbers to
    ``digits`` places. Long Chinese text in a wide frame otherwise wraps
    to one or two characters per line.

    >>> import pandas as pd
    >>> sty = table(pd.DataFrame({"uid": ["a"], "text": ["<b>长文本</b>"]}))
    >>> list(sty.data.columns), 'title="&lt;b&gt;长文本&lt;/b&gt;"' in sty.to_html()
    (['text', 'uid'], True)
    """
    df = text_first(df)
    texts = [c for c in df.columns if c in TEXT_COLUMNS]
    sty = df.style.format(precision=digits, na_rep="")
    sty = sty.format(lambda v: f'<span title="{esc(v)}">{esc(v)}</span>', subset=texts)
    cell = {"min-width": f"{TEXT_MIN_EM}em", "max-width": f"{TEXT_MAX_EM}em",
            "white-space": "nowrap", "overflow": "hidden", "text-overflow": "ellipsis",
            "text-align": "left"}
    sty = sty.set_properties(subset=texts, **cell)
    return sty.set_table_styles([{"selector": "th", "props": [("text-align", "left")]},
                                 {"selector": "td, th", "props": [("white-space", "nowrap")]}])


def kv_html(pairs: Sequence[tuple[str, object]]) -> str:
    """A two-column key/value table, escaped.

    >>> kv_html([("a", "<b>")])
    '<table class="ak-kv"><tr><td>a</td><td>&lt;b&gt;</td></tr></table>'
    """
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{_cell(v, 3)}</td></tr>" for k, v in pairs)
    return f'<table class="ak-kv">{rows}</table>'


_SWATCH = {"fill": "background:{c}", "marker": "background:{c}", "ring": "border-color:{c}",
           "halo": "box-shadow:0 0 4px 3px {c}", "edge": "border-top-color:{c}", "size": ""}


def legend_html(entries: Sequence[dict[str, str]]) -> str:
    """Legend entries (``canvas.legend_entry`` dicts) as HTML: a swatch of the entry's kind
    in its colour and its text, escaped — what canvas.js draws under a graph view, for a
    panel that shows its legend beside another widget (styles: ``canvas.css``).

    >>> legend_html([{"kind": "fill", "colour": "#4e79a7", "text": "a<b"}])[-66:]
    'style="background:#4e79a7"></span><span>a&lt;b</span></span></div>'
    """
    items = "".join(
        f'<span class="ak-legend-item" data-kind="{esc(e["kind"])}" '
        f'data-colour="{esc(e["colour"])}"><span class="ak-swatch ak-swatch-{esc(e["kind"])}" '
        f'style="{esc(_SWATCH.get(e["kind"], "").format(c=e["colour"]))}"></span>'
        f"<span>{esc(e['text'])}</span></span>" for e in entries)
    return f'<div class="ak-graph-legend">{items}</div>'


def note(text: str, *, error: bool = False) -> str:
    """A one-line escaped note (``error`` in red).

    >>> note("x<y", error=True)
    '<div class="ak-note ak-error">x&lt;y</div>'
    """
    cls = "ak-note ak-error" if error else "ak-note"
    return f'<div class="{cls}">{esc(text)}</div>'
