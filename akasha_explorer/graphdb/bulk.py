"""Bulk reads and writes of what the in-memory mirror holds (SPEC §1; issue 14): the Turn
state and the COACT edges as Arrow tables, many changed rows set by one ``LOAD FROM``
statement, the whole COACT table rewritten.

Measured at 100k turns / 3M edges (kuzu 0.11.3): every edge read with its end points'
``ord`` takes ~0.9 s (~1.4 s with their uids); 20,000 Turn updates by ``LOAD FROM`` 0.09 s,
20,000 COACT updates 1.2 s (~60 µs an edge); a rewrite of all 3M edges ~2.5 s.
"""

from __future__ import annotations

import pyarrow as pa

from .kuzu_db import GraphDB

__all__ = ["TURN_STATE_COLUMNS", "add_coact", "coact_edges", "delete_coact", "rewrite_coact",
           "set_coact", "set_turn_states", "turn_states"]

TURN_STATE_COLUMNS = ("uid", "ord", "session", "ts", "message_uids", "assistant_only", "sigma",
                      "strength", "strength_ts", "resource", "resource_ts", "recall_count",
                      "replayed")
"""The Turn properties the mirror loads."""


def turn_states(graph: GraphDB) -> pa.Table:
    """Every Turn's :data:`TURN_STATE_COLUMNS`, in ``ord`` order."""
    return graph.arrow("MATCH (t:Turn) RETURN "
                       + ", ".join(f"t.{c} AS {c}" for c in TURN_STATE_COLUMNS)
                       + " ORDER BY t.ord")


def coact_edges(graph: GraphDB, *, key: str = "ord") -> pa.Table:
    """Every COACT edge as columns ``s``, ``d`` (the end points' ``key``: ``"ord"`` or
    ``"uid"``), ``w`` (weight), ``t`` (last_ts), ``c`` (co_count), in no particular order."""
    if key not in ("ord", "uid"):
        raise ValueError(f"key must be 'ord' or 'uid', not {key!r}")
    return graph.arrow(f"MATCH (a:Turn)-[e:COACT]->(b:Turn) RETURN a.{key} AS s, "
                       f"b.{key} AS d, e.weight AS w, e.last_ts AS t, e.co_count AS c")


def set_turn_states(graph: GraphDB, rows: pa.Table) -> None:
    """Set the dynamic state of the Turns in ``rows`` (columns ``u`` uid, ``s`` strength,
    ``st`` strength_ts, ``r`` resource, ``rt`` resource_ts, ``c`` recall_count, ``p``
    replayed)."""
    graph.load_from("MATCH (t:Turn {uid: u}) SET t.strength = s, t.strength_ts = st, "
                    "t.resource = r, t.resource_ts = rt, t.recall_count = c, t.replayed = p",
                    rows)


def set_coact(graph: GraphDB, rows: pa.Table) -> None:
    """Set existing COACT edges (columns ``s``, ``d`` uids, ``w``, ``t``, ``c``)."""
    graph.load_from("MATCH (a:Turn {uid: s})-[e:COACT]->(b:Turn {uid: d}) "
                    "SET e.weight = w, e.last_ts = t, e.co_count = c", rows)


def delete_coact(graph: GraphDB, rows: pa.Table) -> None:
    """Delete the COACT edges ``s -> d`` (columns ``s``, ``d`` uids) that exist."""
    graph.load_from("MATCH (a:Turn {uid: s})-[e:COACT]->(b:Turn {uid: d}) DELETE e", rows)


def add_coact(graph: GraphDB, edges: pa.Table) -> None:
    """Create COACT edges (columns ``from``, ``to`` uids, ``weight``, ``last_ts``,
    ``co_count``) with ``COPY``."""
    graph.copy("COACT", edges)


def rewrite_coact(graph: GraphDB, edges: pa.Table) -> None:
    """Make the COACT table hold exactly ``edges`` (columns as :func:`add_coact`)."""
    graph.replace("COACT", edges)
