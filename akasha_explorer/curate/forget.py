"""Forget (SPEC §6, user sovereignty): remove a node, a session or an anchor and everything
it owns, so that the forgotten text's bytes are on no file of the store afterwards.

Order: checkpoint (the journal is folded into Kuzu and truncated, so no later checkpoint or
journal replay can bring a deleted edge or query back); delete from Kuzu in one transaction
(turns with their COACT / NEXT / MENTIONS / IN_EPISODE edges, the triples and review items
they own, anchors and aliases left without any mention; then every other row that *names*
what was forgotten — query log, review items, audit entries, anchor notes, the saved
context block — deleted or redacted, see :mod:`.redact`); mask the rows in the mirror;
delete the LanceDB rows and compact with cleanup of every older version, rewriting a table
whose compaction kept deleted rows in a data file (:meth:`VectorDB.optimize`, ``purge``:
the speaker and every other column of a forgotten row leave the disk); finally **rebuild the Kuzu
file** — Kuzu 0.11 keeps deleted strings in its pages (measured: after ``DELETE`` and
``CHECKPOINT`` the bytes are still in ``graph.kuzu``), so the live rows are copied into a
fresh database file that replaces the old one. One audit entry records that a forget
happened, with ids and counts, never the text; the ``Forgotten`` table keeps the forgotten
message ids (session + seq, no text) so that re-importing a source that still holds them —
a cumulative ChatGPT export, say — skips them instead of bringing them back.

A crash in the middle leaves Meta ``forget_pending`` set (and, if it came before the
LanceDB delete, the messages as orphans of their deleted nodes); ``akasha doctor --repair``
removes them and finishes the purge. The rebuilt file replaces the old one atomically.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..graphdb import GraphDB
from ..store.space import GRAPH_RESERVE, WRITE_FACTOR, ensure_free, size_of
from ..vectors import sql_str
from .ops import log_entry
from .redact import Forgotten, forgotten_nodes, scrub

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["PENDING_KEY", "forget", "purge", "rebuild_graph"]

PENDING_KEY = "forget_pending"
"""Meta key set while a forget runs; a crash leaves it, and ``akasha doctor --repair``
finishes the purge (:func:`purge`)."""

log = logging.getLogger(__name__)


def forget(mem: Memory, *, node: str | None = None, session: str | None = None,
           anchor: str | None = None, by: str = "user", why: str | None = None
           ) -> dict[str, Any]:
    """See module docstring; returns counts of what was removed."""
    given = [(k, v) for k, v in (("node", node), ("session", session), ("anchor", anchor))
             if v is not None]
    if len(given) != 1:
        raise InvalidInput("forget takes exactly one of node=, session=, anchor=")
    mem._check_write()
    t0 = time.perf_counter()
    ensure_free(mem.path, GRAPH_RESERVE + 2 * size_of(mem.graph.path)
                + WRITE_FACTOR * size_of(mem.path / "vectors") // 2, "a forget (it rewrites "
                "the graph file and the LanceDB tables without the forgotten rows)")
    mem.checkpoint()
    g = mem.graph
    what, target = given[0]
    if what == "anchor":
        counts = _forget_anchor(mem, target)
    else:
        if what == "session":
            uids = [r["u"] for r in g.rows("MATCH (t:Turn) WHERE t.session = $s RETURN t.uid AS u",
                                           {"s": target})]
            if not uids and not g.rows("MATCH (s:Session {uid: $s}) RETURN s.uid", {"s": target}):
                raise NotFound(f"no session {target!r}; Memory.sessions() lists them")
        else:
            mem._row(target)
            uids = [target]
        counts = _forget_nodes(mem, uids, session=target if what == "session" else None)
    counts["audit"] = log_entry(g, action="forget", target=f"{what}:{target}", actor=by,
                                why=why, before="", after=json.dumps(counts, sort_keys=True))
    rebuild_graph(mem)
    mem.graph.meta_set(PENDING_KEY, "")
    counts["seconds"] = round(time.perf_counter() - t0, 3)
    log.info("forgot %s %s: %s", what, target, counts)
    return counts


def _forget_nodes(mem: Memory, uids: list[str], session: str | None) -> dict[str, Any]:
    g, nodes = mem.graph, mem.mirror.nodes
    rows = [nodes.index[u] for u in uids if u in nodes.index]
    msg_uids = [nodes.msg_uid[j] for i in rows
                for j in range(int(nodes.first_msg[i]), int(nodes.first_msg[i] + nodes.n_msg[i]))]
    named = forgotten_nodes(mem, uids, msg_uids, session)
    triples = [r["u"] for r in g.rows("MATCH (t:Triple) WHERE t.node IN $n RETURN t.uid AS u",
                                      {"n": uids})]
    touched = [r["a"] for r in g.rows(
        "MATCH (t:Turn)-[:MENTIONS]->(a:Anchor) WHERE t.uid IN $n RETURN DISTINCT a.uid AS a",
        {"n": uids})]
    touched += [r["a"] for r in g.rows(
        "MATCH (t:Triple)-[:FACT]->(a:Anchor) WHERE t.uid IN $t RETURN DISTINCT a.uid AS a",
        {"t": triples})]
    links = g.rows("MATCH (a:Turn)-[:NEXT]->(t:Turn)-[:NEXT]->(b:Turn) WHERE t.uid IN $n "
                   "AND NOT a.uid IN $n AND NOT b.uid IN $n RETURN a.uid AS a, b.uid AS b",
                   {"n": uids}) if session is None else []
    counts: dict[str, Any] = {"nodes": len(uids), "messages": len(msg_uids),
                              "triples": len(triples)}
    with g.transaction():
        g.meta_set(PENDING_KEY, "nodes")  # with the deletes; cleared once the purge is done
        g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $s DETACH DELETE r",
                  {"s": uids + triples})
        g.execute("MATCH (t:Triple) WHERE t.uid IN $t DETACH DELETE t", {"t": triples})
        counts["edges"] = int(g.rows(
            "MATCH (t:Turn)-[e:COACT]-() WHERE t.uid IN $n RETURN count(e) AS c", {"n": uids}
        )[0]["c"])
        g.execute("MATCH (t:Turn) WHERE t.uid IN $n DETACH DELETE t", {"n": uids})
        when = time.time()  # tombstones: the ids only, so a re-import skips them
        g.unwind("MERGE (f:Forgotten {uid: r.u}) SET f.ts = r.t",
                 [{"u": u, "t": when} for u in msg_uids])
        g.unwind("MATCH (a:Turn {uid: r.a}), (b:Turn {uid: r.b}) CREATE (a)-[:NEXT]->(b)", links)
        g.execute("MATCH (e:Episode) WHERE NOT EXISTS { MATCH (:Turn)-[:IN_EPISODE]->(e) } "
                  "DELETE e")
        g.execute("MATCH (s:Session) WHERE NOT EXISTS { MATCH (:Turn)-[:IN_SESSION]->(s) } "
                  "DETACH DELETE s")
        counts.update(_prune_anchors(g, sorted(set(touched))))
        counts.update(scrub(mem, replace(named, ids=named.ids | set(triples)
                                         | set(counts.pop("_gone")))))
    m = mem.mirror
    for i in rows:
        nodes.kill(i)
        m.mark_edges_gone(m.edges.drop_node(i))
        m.dirty_nodes.pop(i, None)
        for j in range(int(nodes.first_msg[i]), int(nodes.first_msg[i] + nodes.n_msg[i])):
            m.msg_terms[j] = []
            m.forget_texts([j])
    for u in msg_uids:
        for cache in (mem._texts, mem._hashes):
            if cache is not None:
                cache.pop(u, None)
    for i in range(0, len(uids), 200):
        part = ", ".join(sql_str(u) for u in uids[i:i + 200])
        mem.vectors.delete("messages", f"node IN ({part})")
        mem.vectors.delete("turns", f"uid IN ({part})")
    with warnings.catch_warnings():  # the writer lock means no other reader holds a version
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
        mem.vectors.optimize(cleanup=True)
    return counts


def _prune_anchors(g: GraphDB, anchors: list[str]) -> dict[str, Any]:
    """Delete anchors left without mentions and facts, and aliases no remaining mention
    uses (their surfaces came from the forgotten text)."""
    gone = [r["a"] for r in g.rows(
        "MATCH (a:Anchor) WHERE a.uid IN $a AND NOT EXISTS { MATCH (:Turn)-[:MENTIONS]->(a) } "
        "AND NOT EXISTS { MATCH (:Triple)-[:FACT]->(a) } RETURN a.uid AS a", {"a": anchors})]
    aliases = [r["al"] for r in g.rows(
        "MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE a.uid IN $a RETURN al.uid AS al, "
        "al.norm AS n, a.uid AS a", {"a": anchors}) if r["a"] in gone]
    live = g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE a.uid IN $a AND NOT a.uid IN $g "
                  "OPTIONAL MATCH (:Turn)-[m:MENTIONS]->(a) RETURN al.uid AS al, al.norm AS n, "
                  "collect(m.surface) AS s", {"a": anchors, "g": gone})
    from ..extract.normalize import norm
    aliases += [r["al"] for r in live if r["n"] not in {norm(s) for s in r["s"] if s}]
    g.execute("MATCH (al:Alias) WHERE al.uid IN $x DETACH DELETE al", {"x": aliases})
    g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $a DETACH DELETE r", {"a": gone})
    for a in gone:
        g.execute("MATCH (r:ReviewItem) WHERE r.payload CONTAINS $a DELETE r", {"a": a})
    g.execute("MATCH (a:Anchor) WHERE a.uid IN $a DETACH DELETE a", {"a": gone})
    return {"anchors": len(gone), "aliases": len(aliases), "_gone": gone}


def _forget_anchor(mem: Memory, uid: str) -> dict[str, Any]:
    g = mem.graph
    if not g.rows("MATCH (a:Anchor {uid: $u}) RETURN a.uid", {"u": uid}):
        raise NotFound(f"no anchor {uid!r}; `akasha anchors STORE` lists them")
    triples = [r["t"] for r in g.rows("MATCH (t:Triple)-[:FACT]->(:Anchor {uid: $u}) "
                                      "RETURN DISTINCT t.uid AS t", {"u": uid})]
    with g.transaction():
        g.meta_set(PENDING_KEY, "anchor")  # with the deletes; cleared once the purge is done
        aliases = int(g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) "
                             "RETURN count(al) AS c", {"u": uid})[0]["c"])
        mentions = int(g.rows("MATCH ()-[m:MENTIONS]->(:Anchor {uid: $u}) RETURN count(m) AS c",
                              {"u": uid})[0]["c"])
        g.execute("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) DETACH DELETE al", {"u": uid})
        g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $s OR r.payload CONTAINS $u "
                  "DELETE r", {"s": [uid, *triples], "u": uid})
        g.execute("MATCH (t:Triple) WHERE t.uid IN $t DETACH DELETE t", {"t": triples})
        g.execute("MATCH (a:Anchor {uid: $u}) DETACH DELETE a", {"u": uid})
        red = scrub(mem, Forgotten(ids=frozenset({uid, *triples})))
    return {"anchors": 1, "aliases": aliases, "mentions": mentions, "triples": len(triples),
            **red}


# -- graph file rebuild -------------------------------------------------------------------------
def rebuild_graph(mem: Memory) -> None:
    """Copy every live row of the Kuzu database into a fresh file and swap it in, so
    deleted strings do not survive in free pages."""
    old: GraphDB = mem.graph
    path = Path(old.path)
    tmp = path.with_name(path.name + ".rebuild")
    _remove(tmp)
    ensure_free(path.parent, GRAPH_RESERVE + 2 * size_of(path), "rebuilding the graph file")
    new = GraphDB(tmp)
    try:
        tables = old.rows("CALL show_tables() RETURN name, type")
        for t in (r["name"] for r in tables if r["type"] == "NODE"):
            cols = [r["name"] for r in old.rows(f"CALL table_info('{t}') RETURN *")]
            data = old.arrow(f"MATCH (x:{t}) RETURN " + ", ".join(f"x.{c} AS {c}" for c in cols))
            if t == "Meta":
                data = data.filter(_not_equal(data.column("key"), "schema_version"))
            new.copy(t, data)
        for t in (r["name"] for r in tables if r["type"] == "REL"):
            conn = old.rows(f"CALL show_connection('{t}') RETURN *")[0]
            src, dst = conn["source table primary key"], conn["destination table primary key"]
            cols = [r["name"] for r in old.rows(f"CALL table_info('{t}') RETURN *")]
            data = old.arrow(f"MATCH (a)-[e:{t}]->(b) RETURN a.{src} AS _from, b.{dst} AS _to"
                             + "".join(f", e.{c} AS {c}" for c in cols))
            new.copy(t, data)
    except BaseException:
        new.close()
        _remove(tmp)
        raise
    new.close()
    old.close()  # a clean close folds and removes its WAL: the old file stands alone
    for suffix in (".wal", ".shadow"):
        _remove_file(Path(str(path) + suffix))
    os.replace(tmp, path)  # atomic: a crash leaves the old graph or the new one, never none
    for suffix in (".wal", ".shadow"):
        _remove(Path(str(tmp) + suffix))
    mem.graph = GraphDB(path)


def _not_equal(col: Any, value: str) -> Any:
    import pyarrow.compute as pc
    return pc.not_equal(col, value)


def _remove_file(p: Path) -> None:
    if p.is_file():
        p.unlink()


def purge(mem: Memory) -> None:
    """Finish an interrupted forget: drop LanceDB's older versions (they may still hold the
    forgotten rows) and rebuild the Kuzu file (its free pages may hold deleted strings)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
        mem.vectors.optimize(cleanup=True)
    rebuild_graph(mem)
    mem.graph.meta_set(PENDING_KEY, "")


def _remove(p: Path) -> None:
    for q in (p, Path(str(p) + ".wal"), Path(str(p) + ".shadow"), Path(str(p) + ".lock")):
        if q.is_dir():
            shutil.rmtree(q)
        elif q.exists():
            q.unlink()
