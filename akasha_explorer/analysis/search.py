"""Search a store by meaning and by words (what the MemoryExplorer's search box runs): the
dense items of one recall and the BM25 hits of the same lexical pass, fused by reciprocal
rank (k = 60, the memoirs approach; SPEC §10 names it as a baseline).

The lexical hits are computed once and handed to the engine, so the table shows exactly
the hits the recall used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..recalls import method_input, run_method
from .methods import RRF_K
from .neighbourhood import Neighbourhood

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["SearchHits", "search"]

COLUMNS = ("uid", "dense_rank", "cos_msg", "bm25_rank", "bm25", "rrf", "found_by", "ts",
           "text")
"""Columns of :attr:`SearchHits.frame`, in order."""


@dataclass(frozen=True)
class SearchHits:
    """What :func:`search` found: ``frame`` (one row per node, best first: uid,
    dense_rank, cos_msg, bm25_rank, bm25, rrf, found_by, ts, text), the lexical ``terms``
    used, and how many nodes the dense side and messages the lexical side found."""

    query: str
    now: float
    frame: pd.DataFrame = field(repr=False)
    terms: list[str]
    n_dense: int
    n_lexical: int


def search(store: Store, text: str, *, now: float,
           neighbourhood: Neighbourhood | None = None) -> SearchHits:
    """Dense and lexical hits for ``text`` at ``now``, ordered by reciprocal-rank fusion
    (ties: the lexical hit first). Dense: the recall's ``dense_items`` (top
    ``DENSE_TOP_K`` nodes by their best message's cosine); lexical: BM25 over messages,
    each node at the rank of its best message. Nothing is written (no query-log row).
    ``neighbourhood`` gives the node texts (default: a new one at ``now``).

    Settings read: the store's own — those of
    :meth:`~akasha_explorer.store.Store.lexical` and of the engine's recall."""
    store.check_open()
    s = store.settings
    q = store.embeddings.query(text)
    lex = store.index.lexical(text, now=now, settings=s)
    trace = run_method(store, "akasha", q, lex,
                       method_input(store, "akasha", text, now=now, settings=s))
    n = store.mirror.nodes
    rows: dict[str, dict[str, Any]] = {}
    for k, (u, sc) in enumerate(zip(trace.dense.uids, trace.dense.scores, strict=True)):
        rows[u] = {"uid": u, "dense_rank": k + 1, "cos_msg": sc}
    for k, (mr, sc) in enumerate(zip(lex.msg_rows, lex.scores, strict=True)):
        u = n.uid[int(n.msg_node[mr])]
        r = rows.setdefault(u, {"uid": u})
        if "bm25_rank" not in r:
            r["bm25_rank"], r["bm25"] = k + 1, sc
    df = pd.DataFrame(list(rows.values()),
                      columns=["uid", "dense_rank", "cos_msg", "bm25_rank", "bm25"])
    # reciprocal-rank fusion orders the hits: found by both first
    df["rrf"] = (1.0 / (RRF_K + df["dense_rank"])).fillna(0.0) + (
        1.0 / (RRF_K + df["bm25_rank"])).fillna(0.0)
    ranks = ["dense_rank", "bm25_rank"]      # ranks are whole numbers, missing where not found
    df[ranks] = df[ranks].astype("Int64")
    df = df.sort_values(["rrf", "bm25_rank"], ascending=[False, True],
                        kind="stable").reset_index(drop=True)
    df["found_by"] = ["+".join(x for x, c in (("dense", "dense_rank"), ("lexical", "bm25_rank"))
                               if pd.notna(r[c])) for _, r in df.iterrows()]
    hood = neighbourhood or Neighbourhood(store, now=now)
    df["ts"] = [float(n.ts[n.index[u]]) for u in df["uid"]]
    df["text"] = [hood.text(u) for u in df["uid"]]
    return SearchHits(query=text, now=float(now), frame=df[list(COLUMNS)],
                      terms=[t.term for t in lex.terms if t.kept], n_dense=len(trace.dense),
                      n_lexical=len(lex.msg_rows))
