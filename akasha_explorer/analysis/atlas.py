"""The whole memory as one map (issue 26): every turn — or, for a large store, every
Leiden community — at a fixed place, with its size, colour group, time and label, and the
strongest co-activation edges between them, as plain values a WebGL widget draws.

**Layout.** Community-aware and seeded: the Leiden communities of the ``"nodes"`` view
(the store's analytics, numbered by size, largest first; turns without edges form one
extra group, ``-1``), one point per community from a Fruchterman–Reingold layout of the
community graph (inter-community weight, each community's ``LAYOUT_PER_NODE`` strongest
links), then each community's turns laid out on their own (FR over its internal backbone;
one turn sits at its centre, the unlinked group on a sunflower spiral) in a disc of
radius ∝ √size centred on its point, the discs pushed apart until none overlap, the whole
scaled into the unit disc. A turn has the same coordinates in the whole map and in its
community's drill-down. The layout is made at the store's newest time: ``now`` changes
sizes (decayed strength) and edge weights, never positions or groups.

**Cache.** A layout belongs to a store *version* (:func:`layout_version`): a hash of the
live turns (uid, time) and the alive COACT edges (ends, stored weight, last time, count),
order-free, plus the settings the layout reads — so any ingest, commit, link or forget
makes a new one, and two opens of the same files agree. It is kept on the open store
(``store.derived``) and, when the store is writable, in ``STORE/cache/atlas-<version>.npz``
(only the newest), so a reopened store reads it instead of recomputing; a read-only store
writes nothing. Community discs are laid out inside only when a turn-level atlas needs
them, and saved as they are made. A forget removes the folder
(:meth:`~akasha_explorer.store.Store.clear_derived`); the whole-store export copies
named files only, so it never carries it.

**A live store.** A new version does not lay the memory out again: the newest layout is
brought to it (:func:`_extend`) — forgotten turns dropped, each new turn put in the
community of its strongest link to a turn already placed, next to its linked turns (or
with the turns without links), and no turn already placed moves — until the turns added
since the communities were found reach :data:`EXTEND_SHARE` of them; then the
communities are found and laid out again. A live agent's turn so costs a map 0.45 s at
10k turns instead of a 6 s layout; ``tests/test_atlas.py`` holds that
nothing moves.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import igraph as ig
import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from ..engine.dynamics import strength_eff
from ..errors import InvalidInput
from . import adapters
from .communities import community_label
from .views import backbone, coact_arrays, preview

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = [
    "ATLAS_LABEL_CHARS",
    "ATLAS_LEVELS",
    "ATLAS_MIN_WEIGHT",
    "ATLAS_PER_NODE",
    "EXTEND_SHARE",
    "LAYOUT_PER_NODE",
    "TURNS_MAX",
    "Atlas",
    "atlas",
    "layout_version",
    "strongest",
]

log = logging.getLogger(__name__)

TURNS_MAX = 25_000
"""Most live turns a ``level="auto"`` atlas draws one by one; above it, communities."""

ATLAS_LEVELS = ("auto", "turns", "communities")
"""What an atlas draws: ``"turns"``, ``"communities"``, or ``"auto"`` (by :data:`TURNS_MAX`)."""

ATLAS_LABEL_CHARS = 40
"""Longest turn label of an atlas, in characters (``…`` marks a cut)."""

ATLAS_MIN_WEIGHT = 0.01
"""Weakest effective COACT weight (at ``now``) an atlas draws, by default."""

ATLAS_PER_NODE = 5
"""Most edges an atlas draws per item, by default (the strongest)."""

LAYOUT_PER_NODE = 10
"""Strongest links per turn (per community, in the community graph) the layout pulls by."""

EXTEND_SHARE = 0.10
"""A layout takes new turns in place (:func:`_extend`) until they are this share of the
turns it was made with; then the communities are found and laid out again."""

_FORMAT = "atlas-2"
"""Changes when the layout algorithm does: an older cache file is not read."""

_UNLINKED = "turns without links"

_IGRAPH_RNG = threading.Lock()
"""Held while igraph draws from the seeded generator a layout lends it."""


# -- the value ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Atlas:
    """A map of the memory at ``now`` (see the module docstring): items (turns, or
    communities ``"community:<k>"``) as parallel lists, edges as item indices.

    ``size`` is a turn's decayed strength at ``now`` or a community's number of turns;
    ``group`` the turn's community (``-1``: no edges) or the community's id; ``ts`` a
    turn's time or a community's newest turn (``t0`` its oldest); ``label`` the turn's
    text cut to :data:`ATLAS_LABEL_CHARS` or the community's anchors, most distinctive
    first; ``session`` a turn's session ('' for a community); ``members`` (community level
    only) each community's turns — the groups the map is coloured by, which after new turns
    (the layout extended, see the module docstring) can differ from a fresh Leiden run of
    ``Neighbourhood.communities``. ``version`` names the layout; ``total_turns`` counts the
    live turns of the store; ``community`` is set for one community drilled into.
    """

    level: str
    now: float
    version: str
    total_turns: int
    community: int | None = None
    ids: list[str] = field(default_factory=list)
    x: list[float] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    size: list[float] = field(default_factory=list)
    group: list[int] = field(default_factory=list)
    ts: list[float] = field(default_factory=list)
    t0: list[float] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    session: list[str] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    weight: list[float] = field(default_factory=list)
    members: list[list[str]] = field(default_factory=list)

    def __repr__(self) -> str:
        where = f" community {self.community}" if self.community is not None else ""
        return (f"<Atlas {self.level}{where}: {len(self.ids)} items, {len(self.src)} edges, "
                f"version {self.version}>")

    def to_frame(self) -> pd.DataFrame:
        """The items, one row each: id, label, group, size, ts, t0, session, x, y."""
        return pd.DataFrame({"id": self.ids, "label": self.label, "group": self.group,
                             "size": self.size, "ts": self.ts, "t0": self.t0,
                             "session": self.session, "x": self.x, "y": self.y})

    def edge_frame(self) -> pd.DataFrame:
        """The edges, one row each: source and target ids, weight."""
        ids = np.asarray(self.ids, dtype=object)
        return pd.DataFrame({"source": ids[self.src] if self.src else [],
                             "target": ids[self.dst] if self.dst else [],
                             "weight": self.weight})


# -- edges ------------------------------------------------------------------------------------
def strongest(src: NDArray[np.int64], dst: NDArray[np.int64], w: NDArray[np.float64],
              per_node: int) -> NDArray[np.int64]:
    """Positions of the edges kept when each end keeps at most ``per_node``: strongest
    first, an edge stays while both its ends have room (ties by ends).

    >>> strongest(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([3.0, 1.0, 2.0]), 1)
    array([0])
    """
    order = np.lexsort((dst, src, -w))
    count: dict[int, int] = {}
    keep = []
    for k, a, b in zip(order.tolist(), src[order].tolist(), dst[order].tolist(), strict=True):
        if count.get(a, 0) < per_node and count.get(b, 0) < per_node:
            keep.append(k)
            count[a] = count.get(a, 0) + 1
            count[b] = count.get(b, 0) + 1
    return np.asarray(sorted(keep), np.int64)


def _folded(a: NDArray[np.int64], b: NDArray[np.int64], w: NDArray[np.float64], n: int,
            ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Undirected ``(lo, hi, summed weight)`` of item pairs ``a``–``b`` (loops dropped)."""
    ok = a != b
    lo, hi, w = np.minimum(a[ok], b[ok]), np.maximum(a[ok], b[ok]), w[ok]
    order = np.lexsort((w, hi, lo))        # sums in one order, however the edges were read
    m = sp.coo_matrix((w[order], (lo[order], hi[order])), shape=(n, n)).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    c = m.tocoo()
    return c.row.astype(np.int64), c.col.astype(np.int64), c.data.astype(np.float64)


# -- the version -------------------------------------------------------------------------------
def _mix(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finaliser, elementwise (wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _bits(a: NDArray[Any]) -> NDArray[np.uint64]:
    return np.ascontiguousarray(np.asarray(a, np.float64)).view(np.uint64)


def layout_version(store: Store) -> str:
    """The store version an atlas layout belongs to: ``n<live turns>-e<edges>-<hash>``
    (see the module docstring). Changes with any turn or COACT edge; the same on every
    open of the same store."""
    n, e = store.mirror.nodes, store.mirror.edges
    # what changes whenever a turn or an edge does, in a few passes of numpy: while it
    # holds, the version hashed last time still stands
    m = e.count
    quick = (n.n, int(n.alive[: n.n].sum()), m, e.version, float(e.w[:m].sum()),
             float(e.last_ts[:m].sum()), int(np.asarray(e.co_count[:m]).sum()),
             int(e.alive[:m].sum()), store.settings.EDGE_TAU,
             store.settings.LEIDEN_RESOLUTION, store.settings.LEIDEN_SEED)
    last = store.derived.get("atlas_version")
    if isinstance(last, tuple) and last[0] == quick:
        return str(last[1])
    rows = np.flatnonzero(n.alive[: n.n])
    held = store.derived.get("atlas_keys")          # a row's uid never changes: hash it once
    if not isinstance(held, np.ndarray) or held.size > n.n:
        held = np.zeros(0, np.uint64)
    start = held.size
    fresh = np.fromiter((int.from_bytes(hashlib.blake2b(n.uid[r].encode(), digest_size=8)
                                        .digest(), "little") for r in range(start, n.n)),
                        np.uint64, n.n - start)
    key = np.concatenate([held[:start], fresh]) if start else fresh
    store.derived["atlas_keys"] = key
    with np.errstate(over="ignore"):
        h_nodes = int(np.add.reduce(_mix(key[rows] ^ _mix(_bits(n.ts[rows]))),
                                    dtype=np.uint64)) if rows.size else 0
        ids = np.flatnonzero(e.alive[: e.count])
        s, d = e.src[ids], e.dst[ids]
        ok = (s < n.n) & (d < n.n)
        ok[ok] = n.alive[s[ok]] & n.alive[d[ok]]
        ids, s, d = ids[ok], s[ok], d[ok]
        one = _mix(key[s] ^ _mix(key[d] + np.uint64(0x9E3779B97F4A7C15)))
        one = _mix(one ^ _bits(e.w[ids]))
        one = _mix(one ^ _bits(e.last_ts[ids]))
        one = _mix(one ^ np.asarray(e.co_count[ids], np.int64).view(np.uint64))
        h_edges = int(np.add.reduce(one, dtype=np.uint64)) if ids.size else 0
    cfg = store.settings
    head = f"{_FORMAT}|{cfg.EDGE_TAU!r}|{cfg.LEIDEN_RESOLUTION!r}|{cfg.LEIDEN_SEED!r}"
    digest = hashlib.blake2b(f"{head}|{h_nodes}|{h_edges}".encode(), digest_size=6).hexdigest()
    version = f"n{rows.size}-e{ids.size}-{digest}"
    store.derived["atlas_version"] = (quick, version)
    return version


# -- the layout --------------------------------------------------------------------------------
@dataclass
class _Layout:
    """One version's layout: per turn (``uid`` in row order at the time) its community and
    place (NaN until its community is laid out inside); per community slot (``k`` for
    community k, the last for the unlinked group) its centre, radius, whether done."""

    version: str
    when: float
    uid: NDArray[np.str_]
    comm: NDArray[np.int64]
    centre: NDArray[np.float64]
    radius: NDArray[np.float64]
    xy: NDArray[np.float64]
    done: NDArray[np.bool_]
    base: int = 0
    """Turns the layout held when its communities were found (:func:`_extend` adds turns
    to it until :data:`EXTEND_SHARE` more have come)."""

    def slot(self, comm: NDArray[np.int64]) -> NDArray[np.int64]:
        k = self.centre.shape[0] - 1
        return np.where(comm < 0, k, comm)

    def save(self, path: os.PathLike[str] | str) -> None:
        np.savez(path, version=np.array(self.version), when=np.array(self.when), uid=self.uid,
                 comm=self.comm, centre=self.centre, radius=self.radius, xy=self.xy,
                 done=self.done, base=np.array(self.base))

    @classmethod
    def load(cls, path: os.PathLike[str] | str) -> _Layout:
        with np.load(path, allow_pickle=False) as z:
            return cls(version=str(z["version"]), when=float(z["when"]), uid=z["uid"],
                       comm=z["comm"], centre=z["centre"], radius=z["radius"], xy=z["xy"],
                       done=z["done"], base=int(z["base"]))


def _seeded(seed: int, *parts: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *map(int, parts)])


def _fr(n: int, a: NDArray[np.int64], b: NDArray[np.int64], w: NDArray[np.float64],
        rng: np.random.Generator) -> NDArray[np.float64]:
    """A Fruchterman–Reingold layout of ``n`` vertices from seeded starting places,
    centred, in the unit disc."""
    if n == 1:
        return np.zeros((1, 2))
    g = ig.Graph(n=n, edges=np.column_stack([a, b]).tolist())
    start = rng.uniform(-1.0, 1.0, (n, 2)) * np.sqrt(n)
    weights = (w / w.mean()).tolist() if w.size else None
    with _IGRAPH_RNG:  # FR draws from igraph's generator too: seed it, then give it back
        ig.set_random_number_generator(random.Random(int(rng.integers(2**31))))
        try:
            pos = np.asarray(g.layout_fruchterman_reingold(
                weights=weights, seed=start.tolist(),
                grid="nogrid" if n <= 1000 else "grid").coords, np.float64)
        finally:
            ig.set_random_number_generator(random)
    pos -= pos.mean(axis=0)
    top = np.sqrt((pos ** 2).sum(axis=1)).max()
    return pos / top if top > 0 else pos


def _sunflower(n: int) -> NDArray[np.float64]:
    """``n`` points spread evenly over the unit disc (Vogel's spiral)."""
    i = np.arange(n) + 0.5
    r = np.sqrt(i / n)
    t = i * np.pi * (3.0 - np.sqrt(5.0))
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def _apart(centre: NDArray[np.float64], radius: NDArray[np.float64],
           rng: np.random.Generator, rounds: int = 300) -> NDArray[np.float64]:
    """``centre`` moved until no two discs overlap (each pair pushed apart along the
    line between them, the larger disc moving less)."""
    p = centre.copy()
    gap = 0.05 * float(radius.mean())
    mass = radius ** 2
    for _ in range(rounds):
        pairs = cKDTree(p).query_pairs(2 * float(radius.max()) + gap, output_type="ndarray")
        if not pairs.size:
            break
        i, j = pairs[:, 0], pairs[:, 1]
        delta = p[j] - p[i]
        dist = np.sqrt((delta ** 2).sum(axis=1))
        over = radius[i] + radius[j] + gap - dist
        hit = over > 0
        if not hit.any():
            break
        i, j, delta, dist, over = i[hit], j[hit], delta[hit], dist[hit], over[hit]
        same = dist < 1e-9
        delta[same] = rng.normal(size=(int(same.sum()), 2))
        dist[same] = np.sqrt((delta[same] ** 2).sum(axis=1))
        unit = delta / dist[:, None]
        share = mass[i] + mass[j]
        move = np.zeros_like(p)
        np.add.at(move, i, -unit * (over * mass[j] / share)[:, None])
        np.add.at(move, j, unit * (over * mass[i] / share)[:, None])
        p += 0.6 * move
    return p


def _layout_edges(store: Store, when: float, rows: NDArray[np.int64],
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Undirected COACT edges at ``when`` between ``rows`` (item positions, summed)."""
    n = store.mirror.nodes
    s, d, w, _ = coact_arrays(n, store.mirror.edges, now=when, tau=store.settings.EDGE_TAU)
    pos = np.full(n.n, -1, np.int64)
    pos[rows] = np.arange(rows.size)
    ok = (pos[s] >= 0) & (pos[d] >= 0)
    return _folded(pos[s[ok]], pos[d[ok]], w[ok], rows.size)


def _new_layout(store: Store, version: str) -> _Layout:
    """Communities and their places (no turn placed yet)."""
    when = store.last_ts()
    cfg = store.settings
    view = adapters.build_view(store, "nodes", now=when, resolution=cfg.LEIDEN_RESOLUTION,
                               seed=cfg.LEIDEN_SEED, texts=False)
    nodes = store.mirror.nodes
    rows = view.nodes["row"].to_numpy(np.int64)
    comm = view.nodes["community"].to_numpy(np.int64)
    k = int(comm.max()) + 1 if comm.size else 0
    slots = np.where(comm < 0, k, comm)
    size = np.bincount(slots, minlength=k + 1).astype(np.float64)
    a, b, w = _layout_edges(store, when, rows)
    ca, cb, cw = _folded(slots[a], slots[b], w, k + 1)
    inter = (ca < k) & (cb < k)
    ca, cb, cw = ca[inter], cb[inter], cw[inter]
    if cw.size:
        bb = backbone(sp.coo_matrix((cw, (ca, cb)), shape=(k, k)).tocsr() + sp.coo_matrix(
            (cw, (cb, ca)), shape=(k, k)).tocsr(), LAYOUT_PER_NODE)
        up = sp.triu(bb, k=1).tocoo()
        ca, cb, cw = up.row.astype(np.int64), up.col.astype(np.int64), up.data
    rng = _seeded(cfg.LEIDEN_SEED, k)
    used = size > 0
    place = np.zeros((k + 1, 2))
    if k:
        place[:k] = _fr(k, ca, cb, cw, rng)
    if size[k]:  # the unlinked group sits beside the rest
        place[k] = (np.abs(place[:k]).max(axis=0) + 0.2) if k else 0.0
    radius = np.sqrt(np.maximum(size, 1.0))
    total = float(np.sqrt((radius[used] ** 2).sum()))
    centre = _apart(place * 1.5 * total, radius, rng)
    centre -= centre[used].mean(axis=0)
    reach = float((np.sqrt((centre[used] ** 2).sum(axis=1)) + radius[used]).max()) or 1.0
    return _Layout(version=version, when=when,
                   uid=np.asarray([nodes.uid[r] for r in rows.tolist()], dtype=np.str_),
                   comm=comm, centre=centre / reach, radius=radius / reach,
                   xy=np.full((rows.size, 2), np.nan), done=~used, base=int(rows.size))


def _place(store: Store, lay: _Layout, slots: NDArray[np.int64]) -> bool:
    """Lay out the turns of community ``slots`` not laid out yet; whether any was."""
    todo = [int(c) for c in np.unique(slots) if not lay.done[c]]
    if not todo:
        return False
    n = store.mirror.nodes
    k = lay.centre.shape[0] - 1
    turn_slot = lay.slot(lay.comm)
    sel = np.flatnonzero(np.isin(turn_slot, todo))   # only these turns' edges are folded
    rows = np.asarray([n.index.get(u, -1) for u in lay.uid[sel].tolist()], np.int64)
    live = rows >= 0
    a, b, w = _layout_edges(store, lay.when, rows[live])
    a, b = sel[live][a], sel[live][b]
    same = turn_slot[a] == turn_slot[b]
    a, b, w = a[same], b[same], w[same]
    for c in todo:
        members = np.flatnonzero(turn_slot == c)
        if c == k:
            offset = _sunflower(members.size)
        else:
            local = np.full(lay.uid.size, -1, np.int64)
            local[members] = np.arange(members.size)
            inside = (local[a] >= 0)
            la, lb, lw = local[a[inside]], local[b[inside]], w[inside]
            if lw.size:
                m = sp.coo_matrix((lw, (la, lb)), shape=(members.size,) * 2).tocsr()
                up = sp.triu(backbone(m + m.T, LAYOUT_PER_NODE), k=1).tocoo()
                la, lb, lw = up.row.astype(np.int64), up.col.astype(np.int64), up.data
            offset = _fr(members.size, la, lb, lw, _seeded(store.settings.LEIDEN_SEED, k, c))
        lay.xy[members] = lay.centre[c] + 0.92 * lay.radius[c] * offset
        lay.done[c] = True
    return True


def _cache_file(store: Store, version: str) -> Any:
    return store.cache_dir / f"atlas-{version}.npz"


def _save(store: Store, lay: _Layout) -> None:
    """Write the layout to the store's cache folder (a writer only; the newest kept)."""
    if store.read_only:
        return
    path = _cache_file(store, lay.version)
    try:
        store.cache_dir.mkdir(exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        lay.save(tmp)
        os.replace(tmp, path)
        for old in store.cache_dir.glob("atlas-*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as e:
        log.warning("store %s: atlas layout not cached (%s); it is recomputed next open",
                    store.path, e)


def _newest(store: Store) -> _Layout | None:
    """The layout this store holds: the open store's, else its newest cache file's."""
    lay = store.derived.get("atlas")
    if isinstance(lay, _Layout):
        return lay
    files = sorted(store.cache_dir.glob("atlas-*.npz"), key=lambda f: f.stat().st_mtime)
    for path in reversed(files):
        try:
            return _Layout.load(path)
        except (OSError, ValueError, KeyError) as e:
            log.warning("store %s: unreadable atlas cache %s (%s); recomputing", store.path,
                        path.name, e)
    return None


def _extend(store: Store, old: _Layout, version: str) -> _Layout | None:
    """``old`` brought to this version without moving a turn already placed: forgotten
    turns dropped, each new turn put in the community of its strongest link to a turn
    already in (in time order, so a new session's turns follow each other), near its
    linked turns, or with the turns without links. None when too much is new
    (:data:`EXTEND_SHARE`) or a new turn has nowhere to go: the caller lays out anew."""
    n = store.mirror.nodes
    live = np.flatnonzero(n.alive[: n.n])
    in_old = {u: i for i, u in enumerate(old.uid.tolist())}
    keep = np.asarray([in_old[n.uid[r]] for r in live.tolist() if n.uid[r] in in_old],
                      np.int64)
    new = np.asarray([r for r in live.tolist() if n.uid[r] not in in_old], np.int64)
    if keep.size + new.size > (1.0 + EXTEND_SHARE) * max(old.base, 1) or not keep.size:
        return None
    new = new[np.lexsort((new, n.ts[new]))]
    k = old.centre.shape[0] - 1
    rows = np.concatenate([np.asarray([n.index[u] for u in old.uid[keep].tolist()], np.int64),
                           new])
    comm = np.concatenate([old.comm[keep], np.full(new.size, -2, np.int64)])
    xy = np.concatenate([old.xy[keep], np.full((new.size, 2), np.nan)])
    a, b, w = _layout_edges(store, store.last_ts(), rows)
    if new.size:
        m = sp.coo_matrix((np.r_[w, w], (np.r_[a, b], np.r_[b, a])),
                          shape=(rows.size,) * 2).tocsr()
        unlinked_used = not old.done[k] or bool((old.comm[keep] < 0).any())
        for i in range(keep.size, rows.size):
            lo, hi = m.indptr[i], m.indptr[i + 1]
            nb, nw = m.indices[lo:hi], m.data[lo:hi]
            known = comm[nb] > -2
            nb, nw = nb[known], nw[known]
            jitter = _seeded(int.from_bytes(hashlib.blake2b(
                str(n.uid[rows[i]]).encode(), digest_size=4).digest(), "little"), k)
            if not nb.size:
                if not unlinked_used:
                    return None      # the layout has no place for turns without links
                comm[i] = -1
                c = k
                if old.done[k]:
                    r, t = np.sqrt(jitter.uniform()), jitter.uniform(0, 2 * np.pi)
                    xy[i] = old.centre[k] + 0.92 * old.radius[k] * np.array(
                        [r * np.cos(t), r * np.sin(t)])
                continue
            weight = np.bincount(np.where(comm[nb] < 0, k, comm[nb]), weights=nw,
                                 minlength=k + 1)
            c = int(np.argmax(weight))
            comm[i] = -1 if c == k else c
            near = nb[(np.where(comm[nb] < 0, k, comm[nb]) == c) & ~np.isnan(xy[nb, 0])]
            if old.done[c] and near.size:
                at = np.average(xy[near], axis=0, weights=m[i, near].toarray().ravel())
                xy[i] = at + 0.04 * old.radius[c] * jitter.normal(size=2)
            elif old.done[c]:
                xy[i] = old.centre[c] + 0.5 * old.radius[c] * jitter.uniform(-1, 1, 2)
    return _Layout(version=version, when=store.last_ts(),
                   uid=np.asarray([n.uid[r] for r in rows.tolist()], dtype=np.str_),
                   comm=comm, centre=old.centre, radius=old.radius, xy=xy,
                   done=old.done.copy(), base=old.base)


def _layout(store: Store) -> _Layout:
    """This version's layout: kept on the store, else read from its cache file, else the
    newest layout extended to it (:func:`_extend`), else made (and saved)."""
    version = layout_version(store)
    held = _newest(store)
    if held is not None and held.version == version:
        store.derived["atlas"] = held
        return held
    lay = _extend(store, held, version) if held is not None else None
    if lay is None:
        lay = _new_layout(store, version)
    _save(store, lay)
    store.derived["atlas"] = lay
    return lay


# -- the atlas ---------------------------------------------------------------------------------
def _cut(text: str) -> str:
    return preview(text, ATLAS_LABEL_CHARS)


def _edges(items: int, a: NDArray[np.int64], b: NDArray[np.int64], w: NDArray[np.float64],
           min_weight: float, per_node: int) -> tuple[list[int], list[int], list[float]]:
    lo, hi, sw = _folded(a, b, w, items)
    ok = sw >= min_weight
    lo, hi, sw = lo[ok], hi[ok], sw[ok]
    keep = strongest(lo, hi, sw, per_node)
    order = keep[np.lexsort((hi[keep], lo[keep], -sw[keep]))]
    return lo[order].tolist(), hi[order].tolist(), sw[order].tolist()


def atlas(store: Store, *, now: float | None = None, level: str = "auto",
          community: int | None = None, min_weight: float = ATLAS_MIN_WEIGHT,
          per_node: int = ATLAS_PER_NODE,
          texts: Callable[[], Mapping[str, str]] | None = None) -> Atlas:
    """The memory as a map at ``now`` (default: the newest message; see the module
    docstring): turns visible at ``now`` (``level="turns"``), or their communities
    (``"communities"``); ``"auto"`` draws turns up to :data:`TURNS_MAX` live turns.
    ``community=k`` draws the turns of community ``k`` only (``-1``: those without
    links), with the edges among them. Edges: effective weight at ``now`` of at least
    ``min_weight`` (summed between communities), at most ``per_node`` per item, strongest
    first. ``texts`` gives the texts that name turns (default: read from the store).

    Settings read: ``EDGE_TAU``, ``STRENGTH_TAU``, ``LEIDEN_RESOLUTION``, ``LEIDEN_SEED``."""
    store.check_open()
    if level not in ATLAS_LEVELS:
        raise InvalidInput(f"unknown atlas level {level!r}; use one of "
                           f"{', '.join(ATLAS_LEVELS)}")
    if per_node < 1:
        raise InvalidInput(f"per_node={per_node} must be at least 1")
    when = store.last_ts() if now is None else float(now)
    n = store.mirror.nodes
    total = int(n.alive[: n.n].sum())
    lay = _layout(store)
    groups = sorted({int(c) for c in np.unique(lay.comm)})
    if community is not None and community not in groups:
        raise InvalidInput(f"no community {community} in this store's atlas; communities "
                           f"are {_span(groups)}")
    if level == "auto":
        level = "turns" if total <= TURNS_MAX or community is not None else "communities"
    if level == "communities" and community is not None:
        raise InvalidInput("community= draws one community's turns; leave level at "
                           "'auto' or 'turns'")
    rows = np.asarray([n.index.get(u, -1) for u in lay.uid.tolist()], np.int64)
    seen = rows >= 0
    seen[seen] = n.alive[rows[seen]] & (n.ts[rows[seen]] <= when)
    s, d, w, _ = coact_arrays(n, store.mirror.edges, now=when, tau=store.settings.EDGE_TAU)
    head: dict[str, Any] = {"now": when, "version": lay.version, "total_turns": total,
                            "community": community}
    if level == "communities":
        return _communities(store, lay, seen, rows, (s, d, w), head, min_weight, per_node)
    pick = seen & ((lay.comm == community) if community is not None else True)
    if _place(store, lay, lay.slot(lay.comm[pick])):
        _save(store, lay)
    idx = np.flatnonzero(pick)
    r = rows[idx]
    pos = np.full(n.n, -1, np.int64)
    pos[r] = np.arange(r.size)
    ok = (pos[s] >= 0) & (pos[d] >= 0)
    src, dst, wt = _edges(r.size, pos[s[ok]], pos[d[ok]], w[ok], min_weight, per_node)
    names = (texts or (lambda: adapters.node_names(store)))()
    cfg = store.settings
    size = np.asarray(strength_eff(n.strength[r], n.strength_ts[r], when, cfg.STRENGTH_TAU),
                      np.float64)
    ts = n.ts[r].astype(np.float64).tolist()
    uids = lay.uid[idx].tolist()
    return Atlas(level="turns", **head, ids=uids, x=lay.xy[idx, 0].tolist(),
                 y=lay.xy[idx, 1].tolist(), size=size.tolist(),
                 group=lay.comm[idx].tolist(), ts=ts, t0=list(ts),
                 label=[_cut(names.get(u, "")) for u in uids],
                 session=[n.sessions[int(c)] for c in n.session[r].tolist()],
                 src=src, dst=dst, weight=wt)


def _span(groups: list[int]) -> str:
    named = [g for g in groups if g >= 0]
    out = f"0 to {max(named)}" if named else "none"
    return out + (" and -1 (turns without links)" if -1 in groups else "")


def _communities(store: Store, lay: _Layout, seen: NDArray[np.bool_], rows: NDArray[np.int64],
                 coact: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]],
                 head: dict[str, Any], min_weight: float, per_node: int) -> Atlas:
    """The community level: one item per community with a turn visible at ``now``."""
    n = store.mirror.nodes
    slots = lay.slot(lay.comm)
    k = lay.centre.shape[0] - 1
    count = np.bincount(slots[seen], minlength=k + 1)
    order = [c for c in range(k + 1) if count[c]]
    order = order[-1:] + order[:-1] if k in order else order  # -1 first, as it sorts
    item = np.full(k + 1, -1, np.int64)
    item[order] = np.arange(len(order))
    ts = n.ts[rows[seen]].astype(np.float64)
    newest = np.full(k + 1, -np.inf)
    oldest = np.full(k + 1, np.inf)
    np.maximum.at(newest, slots[seen], ts)
    np.minimum.at(oldest, slots[seen], ts)
    turn_item = np.full(n.n, -1, np.int64)
    turn_item[rows[seen]] = item[slots[seen]]
    s, d, w = coact
    ok = (turn_item[s] >= 0) & (turn_item[d] >= 0)
    src, dst, wt = _edges(len(order), turn_item[s[ok]], turn_item[d[ok]], w[ok], min_weight,
                          per_node)
    ids = lay.uid[seen].tolist()
    by_slot: dict[int, list[str]] = {}
    for u, c in zip(ids, slots[seen].tolist(), strict=True):
        by_slot.setdefault(c, []).append(u)
    group = [(-1 if c == k else c) for c in order]
    # the labels read every shown turn's anchors: kept while the layout, the anchors and
    # the turns shown stay (a drill-down and back does not read them again)
    key = (lay.version, id(store.graph_as_is), store.anchor_version,
           hashlib.blake2b(seen.tobytes(), digest_size=8).hexdigest())
    held = store.derived.get("atlas_labels")
    if isinstance(held, tuple) and held[0] == key:
        named: dict[int, str] = held[1]
    else:
        terms = adapters.node_anchor_names(store, ids)
        df: dict[str, int] = {}
        for names in terms.values():
            for t in set(names):
                df[t] = df.get(t, 0) + 1
        named = {c: (_UNLINKED if c == k else community_label(
            [terms.get(u, ()) for u in by_slot[c]], df, len(terms), sep=" · ")
            or f"community {c}") for c in order}
        store.derived["atlas_labels"] = (key, named)
    labels = [named[c] for c in order]
    return Atlas(level="communities", **head, ids=[f"community:{g}" for g in group],
                 x=lay.centre[order, 0].tolist(), y=lay.centre[order, 1].tolist(),
                 size=count[order].astype(np.float64).tolist(), group=group,
                 ts=newest[order].tolist(), t0=oldest[order].tolist(), label=labels,
                 session=[""] * len(order), src=src, dst=dst, weight=wt,
                 members=[by_slot[c] for c in order])
