"""Small hand-built mirrors (SPEC §1's in-memory mirror) for doctests, notebooks and tests:
explicit vectors, no store.

>>> nodes = toy_nodes([[1.0, 0.0], [0.6, 0.8]], ts=[0.0, 60.0])
>>> nodes.n, nodes.uid
(2, ['n0', 'n1'])
>>> edges = toy_edges([(0, 1, 0.5)], last_ts=60.0)
>>> edges.count, float(edges.w[0])
(1, 0.5)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .state import EdgeStore, NodeTable

__all__ = ["toy_edges", "toy_nodes", "unit"]


def unit(v: ArrayLike) -> np.ndarray:
    """``v`` scaled to unit length (float32), as the engine expects every vector.

    >>> unit([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    a = np.asarray(v, dtype=np.float64)
    return (a / np.linalg.norm(a)).astype(np.float32)


def toy_nodes(
    vectors: ArrayLike,
    *,
    ts: Sequence[float] | None = None,
    sigma: Sequence[float] | None = None,
    strength: Sequence[float] | None = None,
    resource: Sequence[float] | None = None,
    assistant_only: Sequence[bool] | None = None,
    msg_vectors: Sequence[Sequence[ArrayLike]] | None = None,
    sessions: Sequence[str] | None = None,
    prefix: str = "n",
) -> NodeTable:
    """A :class:`NodeTable` with one node per vector (uids ``n0, n1, …``).

    Vectors are normalised. Each node has one message with the node's vector unless
    ``msg_vectors[k]`` gives its messages (a list of vectors). Defaults: ``ts = 60 k``,
    ``sigma = 0``, ``strength = 2.1`` (the initial strength with σ = 0), ``resource = 1``.

    >>> toy_nodes([[1, 0]], msg_vectors=[[[1, 0], [0, 1]]]).m
    2
    """
    vs = np.asarray(vectors, dtype=np.float64)
    n, dim = vs.shape
    nodes = NodeTable(dim=dim)
    for k in range(n):
        mv = [unit(v) for v in msg_vectors[k]] if msg_vectors is not None else [unit(vs[k])]
        t = float(ts[k]) if ts is not None else 60.0 * k
        nodes.add_node(
            f"{prefix}{k}", ts=t, session=sessions[k] if sessions is not None else "s",
            vector=unit(vs[k]), sigma=float(sigma[k]) if sigma is not None else 0.0,
            strength=float(strength[k]) if strength is not None else 2.1,
            resource=float(resource[k]) if resource is not None else 1.0,
            assistant_only=bool(assistant_only[k]) if assistant_only is not None else False,
            msg_vectors=np.stack(mv), msg_ts=[t] * len(mv),
            msg_uids=[f"{prefix}{k}:m{j}" for j in range(len(mv))])
    return nodes


def toy_edges(triples: Iterable[tuple[int, int, float]], *, last_ts: float = 0.0,
              co_count: int = 1) -> EdgeStore:
    """An :class:`EdgeStore` with edges ``(src, dst, w)``, all last updated at ``last_ts``.

    >>> toy_edges([(0, 1, 1.0), (1, 0, 0.2)]).fan(2).tolist()
    [2, 2]
    """
    edges = EdgeStore()
    for s, d, w in triples:
        edges.upsert(int(s), int(d), w=float(w), last_ts=float(last_ts), co_count=co_count)
    return edges
