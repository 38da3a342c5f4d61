"""The store's lexical index (SPEC §4 stage 1; ``store.index``): BM25 over the mirror's
messages under the store's term rules — or another profile's, for a dry run — with what a
query names beyond its words (:mod:`.channels`), the query's time windows, and the masks of
filler turns and asking messages the fusion uses.

Thread-safety: the request path's (the caller holds the store). It reads the graph only as
it is (the anchor channel), never waiting for a fold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from ..config import Settings, time_zone
from ..engine.bm25 import LexicalHits, Postings, TermGroup, bm25_rank, select_terms
from ..text.gates import is_noise
from ..text.timewords import time_windows
from ..text.tokenize import TermRules, is_identifier, terms
from ..text.transcript import user_lines
from .channels import ChannelStore, query_groups

__all__ = ["LexicalIndex"]


class _IndexedStore(ChannelStore, Protocol):
    """What :class:`LexicalIndex` reads of its store."""

    settings: Settings

    def terms_by_uid(self, settings: Settings | None = None) -> dict[str, list[str]]: ...


class LexicalIndex:
    """One store's lexical index (see the module docstring)."""

    def __init__(self, store: _IndexedStore) -> None:
        self._store = store
        self._other: dict[TermRules, tuple[Any, Postings]] = {}

    def postings(self, settings: Settings | None = None) -> Postings:
        """The lexical index of the mirror's messages under the term rules of ``settings``
        (default: the store's own, kept up to date by every write). Other rules — a dry run
        under another profile — get an index built from the stored text on first use and
        kept until the store's messages change."""
        st = self._store
        rules = TermRules.of(settings or st.settings)
        if rules == TermRules.of(st.settings):
            return st.mirror.postings
        n = st.mirror.nodes
        key = (rules, n.m, int(n.msg_alive.sum()))
        cached = self._other.get(rules)
        if cached is None or cached[0] != key:
            by_uid = st.terms_by_uid(settings)
            p = Postings()
            for j, uid in enumerate(n.msg_uid):
                p.add(j, by_uid.get(uid, []) if n.msg_alive[j] else [])
            cached = (key, p)
            self._other[rules] = cached
        return cached[1]

    def lexical(self, text: str, *, now: float, msg_mask: np.ndarray | None = None,
                settings: Settings | None = None) -> LexicalHits:
        """Query terms and BM25 hits of ``text`` as of ``now`` (SPEC §4 stage 1).

        Settings read: the term rules (``FTS_MIN_TOKEN_LEN`` …, see ``TermRules``),
        ``TIME_PRIOR`` and ``HYBRID`` (relative time words are not terms),
        ``QUERY_USER_LINES`` (a transcript is searched by the user's lines:
        :func:`~akasha_explorer.text.transcript.user_lines`; its time words are read from
        every line) and those of :meth:`lexical_terms`."""
        s = settings or self._store.settings
        rules = TermRules.of(s)
        relative = self.time_windows(text, now=now, settings=s, relative=True)
        said = (user_lines(text) or "") if s.QUERY_USER_LINES else ""
        text = said or text
        q = terms(text, rules=rules)
        time_terms = {t for w in relative for t in terms(w[2], rules=rules)}
        alive = self._store.mirror.nodes.msg_alive if msg_mask is None else msg_mask
        groups, replaced, alone = query_groups(self._store, text, now=now, settings=s,
                                               alive=alive, postings=self.postings(s),
                                               time_words=[w[2] for w in relative])
        hits = self.lexical_terms(q, now=now, msg_mask=msg_mask, settings=s,
                                  exclude=time_terms, groups=groups, replaced=replaced,
                                  mentions=alone)
        return dataclasses.replace(hits, searched=said) if said else hits

    def lexical_terms(self, query_terms: Sequence[str], *, now: float,
                      msg_mask: np.ndarray | None = None, settings: Settings | None = None,
                      exclude: Collection[str] = (), groups: Sequence[TermGroup] = (),
                      replaced: Collection[str] = (), mentions: Mapping[str, str] | None = None
                      ) -> LexicalHits:
        """:meth:`lexical` for already tokenised query terms (``exclude``: terms not to use,
        the query's relative time words; ``mentions``: the terms that are the only form of
        an anchor the query names, each with the alias as written, for the block's note).

        Settings read: ``FTS_MIN_IDF``, ``FTS_UNSEEN_IDF``, ``FTS_MAX_TOKENS``,
        ``CAUSAL_IDF``, ``FTS_SKIP_UNSEEN``, ``FTS_MIN_IDF_DOCS``, ``FTS_TOP_K``
        (``FUSION_POOL`` with ``HYBRID``), ``BM25_K1``, ``BM25_B``, ``BM25_LEN_CAP``,
        ``UNNAMED_IDENTIFIERS`` (with ``UNNAMED_FACTOR``) and the term rules' minimum
        length."""
        s = settings or self._store.settings
        n = self._store.mirror.nodes
        alive = n.msg_alive if msg_mask is None else msg_mask
        postings = self.postings(s)
        sel = select_terms(query_terms, postings, n.msg_ts, alive, now=now,
                           min_idf=s.FTS_MIN_IDF, unseen_idf=s.FTS_UNSEEN_IDF,
                           max_terms=s.FTS_MAX_TOKENS, min_len=TermRules.of(s).min_len,
                           causal=s.CAUSAL_IDF, skip_unseen=s.FTS_SKIP_UNSEEN, exclude=exclude,
                           min_docs=s.FTS_MIN_IDF_DOCS, replaced=replaced)
        top = max(s.FTS_TOP_K, s.FUSION_POOL) if s.HYBRID else s.FTS_TOP_K
        names = ([t.term for t in sel if is_identifier(t.term)]
                 if s.UNNAMED_IDENTIFIERS and s.UNNAMED_FACTOR < 1.0 else ())
        return bm25_rank(sel, postings, n.msg_ts, alive, now=now, k1=s.BM25_K1,
                         b=s.BM25_B, top_k=top, causal=s.CAUSAL_IDF, groups=groups,
                         len_cap=s.BM25_LEN_CAP, names=names, mentions=mentions)

    def filler_mask(self, query: str, settings: Settings) -> np.ndarray | None:
        """The nodes a recall of ``query`` demotes as filler (``FILLER_FACTOR``:
        :meth:`Mirror.filler_nodes <akasha_explorer.store.mirror.Mirror.filler_nodes>`), or
        None — the setting is off, or the query is itself a greeting or filler."""
        if not settings.HYBRID or settings.FILLER_FACTOR >= 1.0 or is_noise(query):
            return None
        return self._store.mirror.filler_nodes()

    def asking_mask(self, settings: Settings) -> np.ndarray | None:
        """The messages that ask something, whose relevance the next turn (the answer)
        takes (``ANSWER_HANDOFF``: :meth:`Mirror.asking_messages
        <akasha_explorer.store.mirror.Mirror.asking_messages>`), or None when the setting
        is off."""
        if not settings.HYBRID or settings.ANSWER_HANDOFF <= 0:
            return None
        return self._store.mirror.asking_messages()

    @staticmethod
    def time_windows(text: str, *, now: float, settings: Settings, relative: bool = False
                     ) -> list[tuple[float, float, str]]:
        """The time windows ``text`` names at ``now`` (``(start, end, phrase)``), when
        ``TIME_PRIOR`` is on; none otherwise (:mod:`akasha_explorer.text.timewords`).
        ``relative=True``: only those named relative to now (最近, last week)."""
        if settings.TIME_PRIOR <= 0 or not settings.HYBRID:
            return []
        return [(w.start, w.end, w.phrase)
                for w in time_windows(text, now, tz=time_zone(settings.TIME_ZONE))
                if w.relative or not relative]
