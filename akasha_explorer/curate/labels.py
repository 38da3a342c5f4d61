"""Labelled queries — the store's own recall test set: "for this query, this node should
come up" (``relevant=True``) or "should not" (``relevant=False``).

A label lives in the store (Kuzu ``Label`` table, :mod:`akasha_explorer.graphdb.labels`),
so it is exported and imported with it, and a forget removes every label that names what
was forgotten (:mod:`.redact`). One label per (query, node): labelling a pair again
replaces its verdict. :func:`labelled_set` groups them per query for
:func:`akasha_explorer.analysis.methods.evaluate` (``akasha eval``).

A labels file (``load_labels``) is JSON Lines, one ``{"query", "node", "relevant"}``
object per line (``akasha_explorer/data/demo_labels.jsonl`` is the demo store's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..graphdb import labels as gl
from ..model import Label

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["MAX_QUERY", "demo_labels_path", "label", "labelled_set", "labels", "load_labels",
           "read_labels", "unlabel"]

MAX_QUERY = 2000
"""Longest labelled query, in characters."""


def demo_labels_path() -> Path:
    """The demo store's labelled queries (``akasha_explorer/data/demo_labels.jsonl``).

    >>> demo_labels_path().name
    'demo_labels.jsonl'
    """
    return Path(str(resources.files("akasha_explorer").joinpath("data/demo_labels.jsonl")))


def _row(store: Store, query: Any, node: Any, relevant: Any, by: Any, when: float,
         where: str = "") -> dict[str, Any]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput(f"{where}query must be non-empty text, got {query!r}")
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"{where}query has {len(query)} characters; the most is {MAX_QUERY}")
    if not isinstance(node, str) or not node:
        raise InvalidInput(f"{where}node must be a node id (text), got {node!r}")
    if not isinstance(relevant, bool):
        raise InvalidInput(f"{where}relevant must be True or False, got {relevant!r}")
    if not isinstance(by, str):
        raise InvalidInput(f"{where}by must be text, got {by!r}")
    if not store.has_node(node):
        raise NotFound(f"{where}no node {node!r} in {store.path}; label a node the store holds "
                       "(a recall's items, `akasha stats`)")
    return {"uid": gl.label_uid(query, node), "query": query, "node": node,
            "relevant": relevant, "ts": when, "by": by}


def label(store: Store, query: str, node: str, relevant: bool = True, *,
          by: str = "user") -> str:
    """Label ``node`` as relevant (or not) for ``query``; returns the label's uid. The query
    is kept verbatim."""
    store.check_write()
    row = _row(store, query, node, relevant, by, time.time())
    gl.set_labels(store.graph, [row])
    return str(row["uid"])


def unlabel(store: Store, query: str, node: str) -> bool:
    """Remove the label of ``node`` for ``query``; False when there was none."""
    store.check_write()
    if not isinstance(query, str) or not isinstance(node, str):
        raise InvalidInput("unlabel takes a query and a node id (text)")
    return gl.delete_labels(store.graph, [gl.label_uid(query, node)]) > 0


def labels(store: Store, query: str | None = None) -> list[Label]:
    """Every label, oldest first; ``query``: only that query's."""
    store.check_open()
    return gl.labels(store.graph, query=query)


def read_labels(path: str | Path) -> list[dict[str, Any]]:
    """The label objects of a JSON Lines file (blank lines skipped); a line that is not a
    JSON object is refused, naming it."""
    p = Path(path)
    try:
        lines = p.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInput(f"cannot read labels file {p}: {e}") from None
    out = []
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as e:
            raise InvalidInput(f"{p} line {k} is not JSON ({e})") from None
        if not isinstance(item, dict):
            raise InvalidInput(f"{p} line {k} is not a JSON object")
        out.append(item)
    return out


def load_labels(store: Store, source: str | Path | Iterable[dict[str, Any]], *,
                by: str = "import") -> int:
    """Add the labels of ``source`` (a JSON Lines file, or dicts with ``query``, ``node``,
    ``relevant`` — default True — and optionally ``by``) in one transaction; every item is
    checked first, so a bad one adds none. Returns how many were added or replaced."""
    store.check_write()
    items = read_labels(source) if isinstance(source, str | Path) else list(source)
    when = time.time()
    rows = []
    for k, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise InvalidInput(f"label {k} is not an object with query, node, relevant")
        unknown = sorted(set(item) - {"query", "node", "relevant", "by"})
        if unknown:
            raise InvalidInput(f"label {k} has unknown field(s) {', '.join(unknown)}; a label "
                               "has query, node, relevant and by")
        rows.append(_row(store, item.get("query"), item.get("node"),
                         item.get("relevant", True), item.get("by", by),
                         when + k * 1e-3,  # file order is label order
                         where=f"label {k}: "))
    gl.set_labels(store.graph, list({r["uid"]: r for r in rows}.values()))
    return len(rows)


def labelled_set(rows: Sequence[Label]) -> list[dict[str, Any]]:
    """Labels grouped per query, in the order queries were first labelled:
    ``{"query", "relevant": [nodes], "not_relevant": [nodes]}``.

    >>> labelled_set([Label("l-1", "q", "a", True, 1.0, "user"),
    ...               Label("l-2", "q", "b", False, 2.0, "user")])
    [{'query': 'q', 'relevant': ['a'], 'not_relevant': ['b']}]
    """
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        item = out.setdefault(r.query, {"query": r.query, "relevant": [], "not_relevant": []})
        item["relevant" if r.relevant else "not_relevant"].append(r.node)
    return list(out.values())
