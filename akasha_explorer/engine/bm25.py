"""Lexical side of SPEC §4 stage 1: postings with causal document frequencies, query-term
selection by IDF, and BM25 ranking of messages — vectorised numpy, no per-document loops.

Why not a packaged BM25 (bm25s, LanceDB FTS)? Both freeze the corpus statistics when an
index is built, but the SPEC wants IDF *as of the recall's now* (**[ours]**, so replay is
deterministic) and replay appends one node at a time; rebuilding a packaged index per node
costs seconds. The scoring formula is bm25s' ``method="lucene"`` exactly (a test compares
the two on the same tokens), computed over :class:`Postings`, which grow in place.

Tokenisation is not done here (see :mod:`akasha_explorer.text`); this module sees terms.

>>> p = Postings()
>>> for row, terms in enumerate([["limboo", "spire"], ["spire", "robot"], ["coffee"]]):
...     p.add(row, terms)
>>> ts = np.array([1.0, 2.0, 3.0]); alive = np.ones(3, bool)
>>> sel = select_terms(["limboo", "spire", "unknownword"], p, ts, alive, now=10.0,
...                    min_idf=1.0, unseen_idf=6.0, max_terms=10, min_len=3)
>>> [(t.term, t.kept) for t in sel]
[('unknownword', True), ('limboo', True), ('spire', True)]
>>> hits = bm25_rank(sel, p, ts, alive, now=10.0, k1=1.5, b=0.75, top_k=2)
>>> hits.msg_rows
(0, 1)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .growth import grow

__all__ = ["MENTIONS", "NAMES", "SAYS", "LexicalHits", "Postings", "QueryTerm", "TermGroup",
           "bm25_rank", "idf_select", "select_terms"]


@dataclass(frozen=True)
class QueryTerm:
    """One query term with the numbers that decided whether it was used (SPEC §4 stage 1)."""

    term: str
    df: int
    idf: float
    kept: bool
    reason: str = ""
    """Why it was dropped: ``"short"``, ``"low_idf"``, ``"unseen"``, ``"time"``,
    ``"anchor"`` or ``"over_max"`` (empty if kept)."""


@dataclass(frozen=True)
class TermGroup:
    """Extra query terms that stand for one query word (**[ours]**): an anchor named by an
    alias (one pseudo-term whose postings are the anchor's mentions, ``ANCHOR_WEIGHT``),
    a predicate the query asks about (one pseudo-term whose postings are the messages its
    triples were read from, ``FACT_WEIGHT``), a word's translations (``XLING_WEIGHT``) or
    a one-character Chinese word in the character index (``CHAR_WEIGHT``). A message
    scores ``weight ×`` the BM25 of its best member — alternatives for one word are not
    added up.

    ``members`` are ``(term, message rows, term frequencies)``; ``kind`` is ``"anchor"``,
    ``"fact"``, ``"en>zh"``, ``"zh>en"`` or ``"char"``; ``source`` the query word (or
    alias) it stands for.
    """

    kind: str
    source: str
    weight: float
    members: tuple[tuple[str, NDArray[np.int64], NDArray[np.float64]], ...]

    def record(self, n_docs: int, vis: NDArray[np.bool_]) -> dict[str, object]:
        """A plain summary for the trace: kind, source, weight, and per member term its
        visible document frequency."""
        return {"kind": self.kind, "source": self.source, "weight": self.weight,
                "terms": [t for t, _, _ in self.members],
                "df": [int(vis[r].sum()) if r.size else 0 for _, r, _ in self.members]}


NAMES = 1
"""A :attr:`LexicalHits.holds` bit: the message mentions an anchor the query named (or holds
an identifier it named: :func:`bm25_rank`'s ``names``)."""
SAYS = 2
"""A :attr:`LexicalHits.holds` bit: the message holds another of the query's words."""
MENTIONS = 4
"""A :attr:`LexicalHits.holds` bit: the message holds the only form of an anchor the query
named (Grace), or a translation of that word — it tells what the context block says when
no turn holds the anchor beside the question's other words, and weighs nothing."""


@dataclass(frozen=True)
class LexicalHits:
    """Query terms considered and the top messages by BM25 (rows into the message arrays).

    ``groups`` (**[ours]**) are the :class:`TermGroup` summaries that also scored (anchors,
    translations); empty under the v1 profile. ``holds`` (only when the query named an
    anchor or an identifier) is, per hit, a bit mask: :data:`NAMES` — the message
    mentions an anchor the query named, or holds an identifier it named (v0.3); :data:`SAYS`
    — it holds another of the query's words (or a translation of one); :data:`MENTIONS` —
    it holds the word of an anchor known by one form the query named."""

    terms: tuple[QueryTerm, ...]
    msg_rows: tuple[int, ...]
    scores: tuple[float, ...]
    n_docs: int = 0
    groups: tuple[dict[str, object], ...] = ()
    holds: tuple[int, ...] = ()
    named: tuple[str, ...] = ()
    """The identifiers the query named (``names`` of :func:`bm25_rank`) that it kept."""
    mentioned: tuple[str, ...] = ()
    """The anchors known by one form the query named (``mentions``), as written."""
    searched: str = ""
    """The lines of a query read as a transcript that its terms came from (**[ours]**
    ``QUERY_USER_LINES``: the user's lines); empty when they came from the whole query."""

    @classmethod
    def empty(cls) -> LexicalHits:
        """No terms, no hits."""
        return cls((), (), (), 0)


class Postings:
    """Term -> (message row, term frequency) lists that grow in place, plus doc lengths."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._rows: list[NDArray[np.int64]] = []
        self._tf: list[NDArray[np.float64]] = []
        self._n: list[int] = []
        self._len = np.zeros(0, np.float64)
        self.n_rows = 0

    def add(self, row: int, terms: Sequence[str]) -> None:
        """Index message ``row`` (rows are added in increasing order) with its terms."""
        if row < self.n_rows:
            raise ValueError(f"row {row} already indexed")
        self._len = grow(self._len, row + 1)
        self._len[row] = len(terms)
        self.n_rows = row + 1
        counts: dict[str, int] = {}
        for t in terms:
            counts[t] = counts.get(t, 0) + 1
        for t, c in counts.items():
            tid = self.vocab.get(t)
            if tid is None:
                tid = len(self._rows)
                self.vocab[t] = tid
                self._rows.append(np.zeros(2, np.int64))
                self._tf.append(np.zeros(2, np.float64))
                self._n.append(0)
            k = self._n[tid]
            if k == self._rows[tid].shape[0]:
                self._rows[tid] = grow(self._rows[tid], k + 1)
                self._tf[tid] = grow(self._tf[tid], k + 1)
            self._rows[tid][k] = row
            self._tf[tid][k] = c
            self._n[tid] = k + 1

    def add_many(self, start: int, offsets: ArrayLike, ids: ArrayLike,
                 names: Sequence[str]) -> None:
        """Index rows ``start, start + 1, …`` at once (the mirror's bulk load, issue 14):
        row ``k`` has the terms ``names[ids[offsets[k]:offsets[k + 1]]]``. The same index
        as :meth:`add` row by row, without a Python step per row or term occurrence.

        >>> p = Postings(); p.add(0, ["a"])
        >>> p.add_many(1, [0, 3, 3, 4], [0, 1, 0, 1], ["b", "a"])
        >>> [x.tolist() for x in p.postings("a")], p.doc_len().tolist()
        ([[0, 1, 3], [1.0, 1.0, 1.0]], [1.0, 3.0, 0.0, 1.0])
        """
        off = np.asarray(offsets, np.int64).ravel()
        flat = np.asarray(ids, np.int64).ravel()
        k = off.shape[0] - 1
        if start < self.n_rows:
            raise ValueError(f"row {start} already indexed")
        if k < 0 or off[0] != 0 or off[-1] != flat.shape[0] or bool((np.diff(off) < 0).any()):
            raise ValueError("offsets must rise from 0 to len(ids)")
        if k == 0:
            return
        self._len = grow(self._len, start + k)
        self._len[self.n_rows : start] = 0.0
        self._len[start : start + k] = np.diff(off)
        self.n_rows = start + k
        if not flat.size:
            return
        tid = np.empty(len(names), np.int64)
        for j, t in enumerate(names):
            got = self.vocab.get(t)
            if got is None:
                got = self.vocab[t] = len(self._rows)
                self._rows.append(np.zeros(0, np.int64))
                self._tf.append(np.zeros(0, np.float64))
                self._n.append(0)
            tid[j] = got
        row = start + np.repeat(np.arange(k, dtype=np.int64), np.diff(off))
        keys, tf = np.unique(tid[flat] * self.n_rows + row, return_counts=True)
        terms, rows = keys // self.n_rows, keys % self.n_rows
        cut = np.flatnonzero(np.diff(terms)) + 1
        for t, r, c in zip(terms[np.r_[0, cut]].tolist(), np.split(rows, cut),
                           np.split(tf.astype(np.float64), cut), strict=True):
            n = self._n[t]
            if n:
                r = np.concatenate([self._rows[t][:n], r])
                c = np.concatenate([self._tf[t][:n], c])
            self._rows[t], self._tf[t], self._n[t] = r, c, int(r.shape[0])

    def postings(self, term: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(rows, tf) of ``term``; empty arrays if unseen."""
        tid = self.vocab.get(term)
        if tid is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        k = self._n[tid]
        return self._rows[tid][:k], self._tf[tid][:k]

    def doc_len(self) -> NDArray[np.float64]:
        """Number of terms of each indexed message row."""
        return self._len[: self.n_rows]


def _visible(ts: NDArray[np.float64], alive: NDArray[np.bool_], now: float,
             causal: bool) -> NDArray[np.bool_]:
    return alive & (ts <= now) if causal else alive


def idf_select(n_docs: int, df: int) -> float:
    """SPEC §4 stage 1 IDF used to choose query terms: ``ln((N + 1) / (df + 1)) + 1``.

    >>> round(idf_select(99, 0), 4)
    5.6052
    """
    return math.log((n_docs + 1) / (df + 1)) + 1.0


def select_terms(
    terms: Sequence[str],
    postings: Postings,
    msg_ts: NDArray[np.float64],
    msg_alive: NDArray[np.bool_],
    *,
    now: float,
    min_idf: float,
    unseen_idf: float,
    max_terms: int,
    min_len: int,
    causal: bool = True,
    skip_unseen: bool = False,
    exclude: Collection[str] = (),
    min_docs: int = 0,
    replaced: Collection[str] = (),
) -> tuple[QueryTerm, ...]:
    """SPEC §4 stage 1: keep terms of ``>= min_len`` characters with IDF ``>= min_idf``
    (unseen terms get ``unseen_idf``), at most ``max_terms`` by IDF (ties: first seen).
    With ``skip_unseen`` (**[ours]** ``FTS_SKIP_UNSEEN``) a term no visible message contains
    is dropped (reason ``"unseen"``) instead of taking one of the ``max_terms`` places.
    Terms in ``exclude`` are dropped with reason ``"time"`` (the query's relative time words,
    used as a time window instead: **[ours]** ``TIME_PRIOR``), terms in ``replaced`` with
    reason ``"anchor"`` (an alias's words, searched as its anchor instead: **[ours]**
    ``ANCHOR_WEIGHT``). Below ``min_docs`` visible
    messages the IDF floor is off (**[ours]** ``FTS_MIN_IDF_DOCS``: in a store of ``N``
    messages no term's IDF exceeds ``ln((N + 1) / 2) + 1``, so a floor of 3.5 drops every
    term of a store under 23 messages).

    Returns every distinct term considered, kept ones first in IDF order, with the reason a
    dropped one was dropped — the trace shows them all.

    >>> p = Postings(); p.add(0, ["spire"])
    >>> one = np.ones(1)
    >>> [(t.term, t.reason) for t in select_terms(["nowhere", "spire"], p, one, one > 0, now=2.0,
    ...      min_idf=0.0, unseen_idf=6.0, max_terms=1, min_len=1, skip_unseen=True)]
    [('spire', ''), ('nowhere', 'unseen')]
    """
    vis = _visible(msg_ts, msg_alive, now, causal)
    n_docs = int(vis.sum())
    if n_docs < min_docs:
        min_idf = -math.inf
    seen: dict[str, None] = dict.fromkeys(terms)
    rows: list[tuple[str, int, float, str]] = []
    for t in seen:
        r, _ = postings.postings(t)
        df = int(vis[r].sum()) if r.size else 0
        idf = unseen_idf if df == 0 else idf_select(n_docs, df)
        reason = "short" if len(t) < min_len else ("low_idf" if idf < min_idf else "")
        if not reason and df == 0 and skip_unseen:
            reason = "unseen"
        if not reason and t in exclude:
            reason = "time"
        if not reason and t in replaced:
            reason = "anchor"
        rows.append((t, df, idf, reason))
    order = sorted(range(len(rows)), key=lambda i: (rows[i][3] != "", -rows[i][2], i))
    out: list[QueryTerm] = []
    kept = 0
    for i in order:
        t, df, idf, reason = rows[i]
        if not reason and kept >= max_terms:
            reason = "over_max"
        if not reason:
            kept += 1
        out.append(QueryTerm(t, df, idf, not reason, reason))
    return tuple(out)


def bm25_rank(
    terms: Sequence[QueryTerm],
    postings: Postings,
    msg_ts: NDArray[np.float64],
    msg_alive: NDArray[np.bool_],
    *,
    now: float,
    k1: float,
    b: float,
    top_k: int,
    causal: bool = True,
    groups: Sequence[TermGroup] = (),
    len_cap: float = 0.0,
    names: Collection[str] = (),
    mentions: Mapping[str, str] | None = None,
) -> LexicalHits:
    """BM25 (Lucene variant, as bm25s ``method="lucene"``) of the kept terms, OR-ed.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf' = tf / (tf + k1 (1 - b + b dl /
    avgdl))``; N, df and avgdl over the messages visible at ``now``. Returns the ``top_k``
    messages with a positive score, best first, ties broken by row (deterministic).
    Each of ``groups`` (**[ours]**) adds ``weight × max`` over its members of the same
    per-term BM25 (:class:`TermGroup`). ``len_cap`` (**[ours]**, ``BM25_LEN_CAP``; 0: off)
    caps ``dl`` at ``len_cap × avgdl`` (avgdl of the uncapped lengths): a long message is
    normalised as if it were that long, since its matches sit in one passage of it.
    ``names`` (**[ours]**, ``UNNAMED_IDENTIFIERS``) are query terms that name what the query
    is about (a version, a code): a message holding one is marked :data:`NAMES` in
    ``holds``, as if it mentioned a named anchor. ``mentions`` are the query terms that
    are the only form of an anchor the query named, each with the alias as written: a
    message holding one (or a translation of it) is marked :data:`MENTIONS` — read by the
    context block's note, never by a score.

    >>> p = Postings(); p.add(0, ["spire"]); p.add(1, ["tower"])
    >>> ts, alive = np.zeros(2), np.ones(2, bool)
    >>> g = TermGroup("zh>en", "尖塔", 0.5, (("spire", *p.postings("spire")),))
    >>> hits = bm25_rank([QueryTerm("tower", 1, 1.0, True)], p, ts, alive, now=1.0, k1=1.5,
    ...                  b=0.75, top_k=5, groups=[g])
    >>> hits.msg_rows, round(hits.scores[0] / hits.scores[1], 3), hits.groups[0]["df"]
    ((1, 0), 2.0, [1])
    """
    vis = _visible(msg_ts, msg_alive, now, causal)
    n_docs = int(vis.sum())
    kept = [t for t in terms if t.kept]
    records = tuple(g.record(n_docs, vis) for g in groups)
    if n_docs == 0 or not (kept or groups):
        return LexicalHits(tuple(terms), (), (), n_docs, records)
    dl = postings.doc_len()[: vis.shape[0]]
    avgdl = float(dl[vis].mean()) or 1.0
    if len_cap > 0:
        dl = np.minimum(dl, len_cap * avgdl)
    score = np.zeros(vis.shape[0], np.float64)

    def term_score(rows: NDArray[np.int64], tf: NDArray[np.float64]
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        ok = (rows < vis.shape[0])
        rows, tf = rows[ok], tf[ok]
        m = vis[rows]
        rows, tf = rows[m], tf[m]
        df = rows.size
        if df == 0:
            return rows, tf
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        return rows, idf * tf / (tf + k1 * (1.0 - b + b * dl[rows] / avgdl))

    named = {g.source for g in groups if g.kind == "anchor"}
    ident = {t.term for t in kept if t.term in names}
    said = dict(mentions or {})
    said.update({w.casefold(): w for w in said.values()})   # a translation's source word
    alone = {t.term for t in kept if t.term in said}
    holds = np.zeros(vis.shape[0], np.int64) if named or ident or alone else None

    def bit(word: str, anchor: bool = False) -> int:
        if anchor or word in ident or word in named:
            return NAMES
        return MENTIONS if word in said else SAYS

    for t in kept:
        rows, tf = postings.postings(t.term)
        if rows.size == 0:
            continue
        rows, part = term_score(rows, tf)
        if rows.size:
            score[rows] += part
            if holds is not None:
                holds[rows] |= bit(t.term)
    for g in groups:
        best = np.zeros(vis.shape[0], np.float64)
        for _, rows, tf in g.members:
            rows, part = term_score(rows, tf)
            if rows.size:
                np.maximum.at(best, rows, part)
                if holds is not None:  # a translation of the anchor's own word names it
                    holds[rows] |= bit(g.source, g.kind == "anchor")
        score += g.weight * best
    cand = np.flatnonzero(score > 0)
    if cand.size == 0:
        return LexicalHits(tuple(terms), (), (), n_docs, records)
    order = np.lexsort((cand, -score[cand]))[:top_k]
    top = cand[order]
    return LexicalHits(tuple(terms), tuple(int(r) for r in top),
                       tuple(float(score[r]) for r in top), n_docs, records,
                       () if holds is None else tuple(int(holds[r]) for r in top),
                       tuple(t.term for t in kept if t.term in ident),
                       tuple(dict.fromkeys(said[t.term] for t in kept if t.term in alone)))
