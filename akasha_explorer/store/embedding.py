"""The store's embedding model and the vectors it keeps (``store.embeddings``).

The model is loaded on first use and checked against the store's manifest. Two caches
spare it work: the last :data:`QUERY_VECTORS` query vectors (a query recalled again — a
what-if, a time slider, a labelled set — is not embedded again), and the vectors a server
computes for a turn *before* it takes the store (:meth:`EmbeddingCache.prepare_turn`), used
once by that turn's ingest. An agent's user text is embedded once a loop: its recall's
query vector is its message's vector.

Thread-safety: every method may be called from any thread (a server embeds before taking
the store); the caches are guarded by ``store.vector_cache``, the model by its own lock
(``embed.model``), never held together.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .._locks import ordered_lock
from .._timing import phase
from ..embed import Embedder, store_embedder
from ..model import RawMessage
from ..text.indexing import index_text
from .manifest import Manifest

__all__ = ["PREPARED_VECTORS", "QUERY_VECTORS", "EmbeddingCache"]

QUERY_VECTORS = 256
"""How many query vectors a store keeps (:meth:`EmbeddingCache.query`)."""
PREPARED_VECTORS = 256
"""How many message vectors :meth:`EmbeddingCache.prepare_turn` keeps waiting for their
ingest."""


class EmbeddingCache:
    """One store's model and kept vectors; ``manifest``: the store's (its settings and
    model), ``embedder``: a model to use instead of loading the store's own."""

    def __init__(self, manifest: Manifest, path: Path, *, read_only: bool,
                 embedder: Embedder | None = None) -> None:
        self._manifest = manifest
        self._path = path
        self.read_only = read_only
        self.closed = False
        """Set by the store's close: :meth:`prepare_turn` does nothing after it."""
        self._embedder = embedder
        self._query_vecs: dict[str, np.ndarray] = {}  # text -> vector, newest last
        self._text_vecs: dict[str, np.ndarray] = {}   # index text -> vector (prepare_turn)
        self._lock = ordered_lock("store.vector_cache")

    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (loaded on first use)."""
        if self._embedder is None:
            emb = store_embedder(self._manifest.settings)
            self._manifest.check_model(emb.name, emb.dim, self._path)
            self._embedder = emb
        return self._embedder

    @property
    def loaded(self) -> Embedder | None:
        """The model if it is loaded (None: not yet)."""
        return self._embedder

    def reset(self) -> None:
        """Load the model again on next use and forget every kept vector (the store's
        ``EMBED_DTYPE`` changed)."""
        self._embedder = None
        with self._lock:
            self._query_vecs.clear()
            self._text_vecs.clear()

    def query(self, text: str) -> np.ndarray:
        """L2-normalised query vector of ``text``; the last :data:`QUERY_VECTORS` are kept."""
        with self._lock:
            v = self._query_vecs.pop(text, None)
        if v is None:
            with phase("embed"):
                v = self.embedder.encode([text])[0]
            v.setflags(write=False)
        with self._lock:
            while len(self._query_vecs) >= QUERY_VECTORS:
                self._query_vecs.pop(next(iter(self._query_vecs)))
            self._query_vecs[text] = v
        return v

    def batch(self, texts: Sequence[str], *, batch_size: int = 64,
              progress: bool = False) -> np.ndarray:
        """The vectors of an ingest batch's index texts: those :meth:`prepare_turn`
        computed (each taken once: several turns written together find theirs) or a recent
        query's (:meth:`query`: an agent's user text was its recall's query first), the
        rest from the model in one call."""
        with self._lock:
            ready = [self._known(t, take=True) for t in texts]
        todo = [i for i, v in enumerate(ready) if v is None]
        if len(todo) == len(texts):
            with phase("embed"):
                return self.embedder.encode(texts, batch_size=batch_size, progress=progress)
        if todo:
            with phase("embed"):
                vecs = self.embedder.encode([texts[i] for i in todo], batch_size=batch_size)
            for i, v in zip(todo, vecs, strict=True):
                ready[i] = v
        return np.stack([np.asarray(v) for v in ready])

    def _known(self, text: str, *, take: bool = False) -> np.ndarray | None:
        """The vector of ``text`` if :meth:`prepare_turn` or :meth:`query` made it
        (``take``: a prepared one is used once). The caller holds the cache lock. A user's
        text is embedded once per agent loop — as the query of its recall, then reused as
        its message's vector (the model's vector of the same text, made alone rather than
        in a batch: equal to ~1e-7 in float32, to a cosine of ~0.99998 in bfloat16) —
        not twice: ~8–10 ms of the model per loop."""
        v = self._text_vecs.pop(text, None) if take else self._text_vecs.get(text)
        return self._query_vecs.get(text) if v is None else v

    def prepare_turn(self, user: str | None, assistant: str | None, *, when: float) -> None:
        """Embed what :meth:`Memory.add_turn <akasha_explorer.memory.Memory.add_turn>` of
        this turn will need — the query vector of ``user`` and the vectors of the turn's
        messages, computed the same way ingest does — so a server can do it *before* taking
        the store (the model is the slow part of a turn). A no-op for a store that is
        closed or read-only; the vectors are used once and a few are kept."""
        if self.closed or self.read_only:
            return
        s = self._manifest.settings
        raws = [RawMessage("prepare", k, when, role, text, source="add_turn")
                for k, (role, text) in enumerate(
                    (r, t) for r, t in (("user", user), ("assistant", assistant))
                    if t is not None)]
        texts = tuple(index_text(m, s) for m in raws)
        if user is not None:
            self.query(user)
        with self._lock:
            todo = [t for t in texts if self._known(t) is None]
        if not todo:
            return
        with phase("embed"):
            vecs = self.embedder.encode(todo, batch_size=s.EMBED_BATCH)
        with self._lock:
            self._text_vecs.update(zip(todo, vecs, strict=True))
            while len(self._text_vecs) > PREPARED_VECTORS:
                self._text_vecs.pop(next(iter(self._text_vecs)))
