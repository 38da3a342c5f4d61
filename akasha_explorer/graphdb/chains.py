"""NEXT chains: each session's nodes linked one after another in the order of their first
message's ``seq``, whatever order the files that hold them arrive in (issue 18, item 5).

A node's uid is its first message's uid, ``session:seq``, so the order is read from the
uids. An ingest that adds nodes to a session that already has some computes the session's
whole chain and changes only the links that differ (:func:`relink`, inside the batch's
transaction): ingesting seq 2, 3 and then seq 0, 1 gives 0 → 1 → 2 → 3, not 3 → 0.
``akasha doctor`` compares every session's links with :func:`wanted` and ``--repair``
relinks the sessions that differ.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence

import pyarrow as pa

from .kuzu_db import GraphDB

__all__ = ["first_seq", "links", "relink", "wanted"]


def first_seq(node_uid: str) -> int:
    """The seq of a node's first message, from its uid (``session:seq``).

    >>> first_seq("2026-10-10-night:12"), first_seq("a:b:3")
    (12, 3)
    """
    return int(node_uid.rsplit(":", 1)[1])


def wanted(nodes: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The NEXT links ``nodes`` (``(uid, session)`` pairs) should have: per session, in
    first-seq order.

    >>> sorted(wanted([("s:2", "s"), ("s:0", "s"), ("t:5", "t"), ("s:7", "s")]))
    [('s:0', 's:2'), ('s:2', 's:7')]
    """
    per: dict[str, list[str]] = defaultdict(list)
    for uid, session in nodes:
        per[session].append(uid)
    out: set[tuple[str, str]] = set()
    for uids in per.values():
        out.update(itertools.pairwise(sorted(uids, key=first_seq)))
    return out


def links(g: GraphDB, sessions: Sequence[str] | None = None) -> list[tuple[str, str, str, str]]:
    """NEXT links as ``(from uid, to uid, from session, to session)``: all of them, or
    those touching a node of one of ``sessions``."""
    where = "" if sessions is None else " WHERE a.session IN $s OR b.session IN $s"
    t = g.arrow("MATCH (a:Turn)-[:NEXT]->(b:Turn)" + where + " RETURN a.uid AS a, b.uid AS b, "
                "a.session AS sa, b.session AS sb",
                None if sessions is None else {"s": list(sessions)}).to_pydict()
    return list(zip(t["a"], t["b"], t["sa"], t["sb"], strict=True))


def relink(g: GraphDB, drop: Iterable[tuple[str, str]], add: Iterable[tuple[str, str]]) -> None:
    """Delete the links ``drop`` and create the links ``add`` (call inside the
    transaction that changes the nodes; new links by ``COPY``, see :class:`GraphDB`)."""
    gone = [{"a": a, "b": b} for a, b in sorted(set(drop))]
    if gone:
        g.unwind("MATCH (a:Turn {uid: r.a})-[e:NEXT]->(b:Turn {uid: r.b}) DELETE e", gone)
    new = sorted(set(add))
    if new:
        g.copy("NEXT", pa.table({"from": [a for a, _ in new], "to": [b for _, b in new]}))
