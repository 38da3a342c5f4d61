"""Memory methods for anchors, triples, episodes, the review queue, curation and forget
(SPEC §6). Mixed into :class:`~akasha_explorer.memory.Memory`; logic lives in
:mod:`akasha_explorer.extract` and this package. Every curation method records its edit in
the audit log and returns the audit uid, which :meth:`CurateMixin.undo` reverses."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..errors import InvalidInput
from . import anchors as an
from .ops import audit_rows, record, undo

if TYPE_CHECKING:
    from ..extract.base import Extractor
    from ..extract.pipeline import ExtractReport
    from .review import ReviewQueue

__all__ = ["CurateMixin"]


class CurateMixin:
    """Anchors / review / curation / forget part of the Memory facade."""

    extractor: Extractor | None = None
    """The extractor run at ingest (None: the offline rule-based default)."""

    # -- extraction ------------------------------------------------------------------------
    def _after_ingest(self, node_uids: Sequence[str]) -> None:
        """Hook run by the ingest pipeline after new nodes reached both stores
        (extraction of anchors, mentions, triples, episode membership)."""
        if node_uids and self.settings.EXTRACT:  # type: ignore[attr-defined]
            g = self.graph  # type: ignore[attr-defined]
            with g.transaction():  # one commit: a crash leaves the pending mark, not half
                self.extract(node_uids)
                g.meta_set("extract_pending", "")

    def extract(self, node_uids: Sequence[str]) -> ExtractReport:
        """Run extraction for stored nodes (done at ingest when ``Settings.EXTRACT``)."""
        from ..extract.pipeline import extract_nodes
        self._check_write()  # type: ignore[attr-defined]
        return extract_nodes(self, node_uids, self.extractor)  # type: ignore[arg-type]

    # -- reading ---------------------------------------------------------------------------
    def anchors(self, search: str | None = None, *, kind: str | None = None,
                status: str | None = "active") -> list[dict[str, Any]]:
        """Anchors (default: active ones) with aliases and mention counts, most mentioned
        first; ``search`` matches names and aliases after normalisation."""
        return an.list_anchors(self.graph, search=search, kind=kind,  # type: ignore[attr-defined]
                               status=status)

    def anchor(self, uid: str) -> dict[str, Any]:
        """One anchor with its aliases, mentions (node, message, span, surface) and triples."""
        return an.anchor_detail(self.graph, uid)  # type: ignore[attr-defined]

    def triples(self, *, anchor: str | None = None, status: str | None = None
                ) -> list[dict[str, Any]]:
        """Triples (optionally of one anchor as subject or object, or with one status),
        oldest first, with subject / object names and provenance."""
        return self.graph.rows(  # type: ignore[attr-defined]
            "MATCH (t:Triple)-[:FACT {role: 'subject'}]->(s:Anchor) "
            "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) "
            "WITH t, s, o WHERE ($st IS NULL OR t.status = $st) AND "
            "($a IS NULL OR s.uid = $a OR o.uid = $a) "
            "RETURN t.uid AS uid, s.uid AS subject_uid, s.name AS subject, "
            "t.predicate AS predicate, o.uid AS object_uid, o.name AS object, "
            "t.object_literal AS literal, t.slot AS slot, t.status AS status, "
            "t.confidence AS confidence, t.valid_from AS valid_from, "
            "t.superseded_by AS superseded_by, t.node AS node, t.span_start AS span_start, "
            "t.span_end AS span_end, t.quote AS quote ORDER BY valid_from, uid",
            {"st": status, "a": anchor})

    def episodes(self, *, kind: str | None = None, session: str | None = None
                 ) -> list[dict[str, Any]]:
        """Episodes with their node uids, in time order."""
        return self.graph.rows(  # type: ignore[attr-defined]
            "MATCH (t:Turn)-[:IN_EPISODE]->(e:Episode) WHERE ($k IS NULL OR e.kind = $k) AND "
            "($s IS NULL OR e.session = $s) RETURN e.uid AS uid, e.kind AS kind, "
            "e.label AS label, e.session AS session, e.start_ts AS start_ts, "
            "e.end_ts AS end_ts, collect(t.uid) AS nodes ORDER BY start_ts, uid",
            {"k": kind, "s": session})

    def set_episodes(self, kind: str, groups: Sequence[Sequence[str]],
                     labels: Sequence[str] | None = None) -> int:
        """Replace every episode of ``kind`` with ``groups`` of node uids (the hook that
        turns co-activation communities into episodes, SPEC §6/§7). Returns the count."""
        if kind == "gap":
            raise InvalidInput("gap episodes are made by extraction; pick another kind")
        self._check_write()  # type: ignore[attr-defined]
        g = self.graph  # type: ignore[attr-defined]
        mirror = self.mirror  # type: ignore[attr-defined]
        eps, links = [], []
        for k, nodes in enumerate(groups):
            rows = [mirror.nodes.index[u] for u in nodes if u in mirror.nodes.index]
            if not rows:
                continue
            ts = mirror.nodes.ts[rows]
            sessions = {mirror.nodes.sessions[int(mirror.nodes.session[i])] for i in rows}
            uid = f"ep-{kind}-{k}"
            eps.append({"uid": uid, "kind": kind,
                        "label": labels[k] if labels else f"{kind} {k}",
                        "session": sessions.pop() if len(sessions) == 1 else "",
                        "start_ts": float(ts.min()), "end_ts": float(ts.max())})
            links += [(mirror.nodes.uid[i], uid) for i in rows]
        with g.transaction():
            g.execute("MATCH (e:Episode) WHERE e.kind = $k DETACH DELETE e", {"k": kind})
            if eps:
                g.copy("Episode", pa.Table.from_pylist(eps))
                g.copy("IN_EPISODE", pa.table({"from": [a for a, _ in links],
                                               "to": [b for _, b in links]}))
        return len(eps)

    # -- review queue ----------------------------------------------------------------------
    @property
    def review(self) -> ReviewQueue:
        """The review queue: ``mem.review()`` lists pending items;
        ``mem.review.approve(uid, why=...)`` / ``.reject`` / ``.edit`` decide."""
        from .review import ReviewQueue
        return ReviewQueue(self)  # type: ignore[arg-type]

    # -- curation --------------------------------------------------------------------------
    def _record(self, action: str, target: str, ops: list[dict[str, Any]], why: str | None,
                by: str) -> str:
        self._check_write()  # type: ignore[attr-defined]
        return record(self.graph, action=action, target=target, ops=ops,  # type: ignore[attr-defined]
                      actor=by, why=why)

    def rename_anchor(self, uid: str, name: str, *, why: str | None = None,
                      by: str = "user") -> str:
        """Rename an anchor (the new name also becomes an alias); returns the audit uid."""
        return self._record("rename", uid, an.rename_ops(self.graph, uid, name, _now()),  # type: ignore[attr-defined]
                            why, by)

    def merge_anchors(self, keep: str, absorb: str, *, why: str | None = None,
                      by: str = "user") -> str:
        """Move every alias, mention and fact of ``absorb`` onto ``keep``."""
        return self._record("merge", keep, an.merge_ops(self.graph, keep, absorb), why, by)  # type: ignore[attr-defined]

    def split_anchor(self, uid: str, aliases: Sequence[str], *, name: str | None = None,
                     why: str | None = None, by: str = "user") -> tuple[str, str]:
        """Move ``aliases`` (with their mentions and facts) to a new anchor; returns
        ``(new anchor uid, audit uid)``."""
        new, ops = an.split_ops(self.graph, uid, list(aliases), name, _now())  # type: ignore[attr-defined]
        return new, self._record("split", uid, ops, why, by)

    def add_alias(self, uid: str, surface: str, *, why: str | None = None,
                  by: str = "user") -> str:
        """Add an alias (stored verbatim; matched after normalisation)."""
        return self._record("add_alias", uid,
                            an.alias_ops(self.graph, uid, surface, _now(), add=True), why, by)  # type: ignore[attr-defined]

    def remove_alias(self, uid: str, surface: str, *, why: str | None = None,
                     by: str = "user") -> str:
        """Remove an alias (its mentions stay)."""
        return self._record("remove_alias", uid,
                            an.alias_ops(self.graph, uid, surface, _now(), add=False), why, by)  # type: ignore[attr-defined]

    def attach_mention(self, uid: str, msg: str, start: int, end: int, *,
                       why: str | None = None, by: str = "user") -> str:
        """Say that ``text[start:end]`` of message ``msg`` names anchor ``uid``."""
        an.get_anchor(self.graph, uid)  # type: ignore[attr-defined]
        node = self._node_of_message(msg)  # type: ignore[attr-defined]
        text = self._all_texts().get(msg) if node else None  # type: ignore[attr-defined]
        if node is None or text is None:
            raise InvalidInput(f"no message {msg!r} in this store")
        if not 0 <= start < end <= len(text):
            raise InvalidInput(f"span {start}:{end} is outside message {msg} "
                               f"({len(text)} characters)")
        row = {"node": node, "msg": msg, "span_start": start, "span_end": end,
               "surface": text[start:end]}
        return self._record("attach_mention", uid,
                            [{"op": "create_mention", "rows": [row], "anchor": uid}], why, by)

    def detach_mention(self, uid: str, msg: str, start: int, *, why: str | None = None,
                       by: str = "user") -> str:
        """Remove the mention of anchor ``uid`` at ``start`` in message ``msg``."""
        rows = [m for m in an.mention_rows(self.graph, uid)  # type: ignore[attr-defined]
                if m["msg"] == msg and m["span_start"] == start]
        if not rows:
            raise InvalidInput(f"anchor {uid} has no mention at {msg}:{start}")
        return self._record("detach_mention", uid,
                            [{"op": "delete_mention", "rows": rows, "anchor": uid}], why, by)

    def audit(self, *, target: str | None = None, limit: int | None = None
              ) -> list[dict[str, Any]]:
        """The audit log, newest first: who did what, when and why (with the ops)."""
        return audit_rows(self.graph, target=target, limit=limit)  # type: ignore[attr-defined]

    def undo(self, audit_uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Reverse one audit entry (itself recorded, so an undo can be undone).

        Undoing an approved suggested link removes the two edges it made (or puts back the
        weights they had) only while no recall has written to them since; after that the
        link is the memory's own and the undo is refused."""
        self._check_write()  # type: ignore[attr-defined]
        return undo(self.graph, audit_uid, actor=by, why=why,  # type: ignore[attr-defined]
                    mirror=self._mirror_ops)

    # -- links a person confirmed (COACT edges through the write path) ---------------------
    def _link_op(self, a: str, b: str, now: float) -> dict[str, Any]:
        """The ``link`` op of a confirmed pair (see :func:`..engine.writeback.link_plan`);
        its time is ``now`` or later: never before the pair's nodes or edges."""
        from ..engine.writeback import link_plan
        m = self.mirror  # type: ignore[attr-defined]
        ra, rb = self._row(a), self._row(b)  # type: ignore[attr-defined]
        when = max(float(now), float(m.nodes.ts[ra]), float(m.nodes.ts[rb]))
        for s, d in ((ra, rb), (rb, ra)):
            e = m.edges.find(s, d)
            if e >= 0:
                when = max(when, float(m.edges.last_ts[e]))
        plan = link_plan(m.nodes, m.edges, ra, rb, now=when,
                         settings=self.settings)  # type: ignore[attr-defined]
        return {"op": "link", "a": a, "b": b, "plan": plan.to_dict()}

    def _mirror_ops(self, ops: Sequence[dict[str, Any]], dry: bool) -> None:
        """The :data:`..curate.ops.MirrorHook` of this memory: check or apply link ops
        (applied all or nothing: a journal append that fails reloads the mirror)."""
        if dry:
            self._apply_mirror_ops(ops, dry=True)
            return
        with self._journaled():  # type: ignore[attr-defined]
            self._apply_mirror_ops(ops, dry=False)

    def _apply_mirror_ops(self, ops: Sequence[dict[str, Any]], *, dry: bool) -> None:
        from ..engine.writeback import WritebackPlan, apply_plan
        m, journal = self.mirror, self.journal  # type: ignore[attr-defined]
        for op in ops:
            plan = WritebackPlan.from_dict(op["plan"])
            eu = plan.edges
            pairs = [(self._row(s), self._row(d))  # type: ignore[attr-defined]
                     for s, d in zip(eu.src_uid, eu.dst_uid, strict=True)]
            state = []
            for s, d in pairs:
                e = m.edges.find(s, d)
                state.append(None if e < 0 else (float(m.edges.w[e]), float(m.edges.last_ts[e]),
                                                 int(m.edges.co_count[e])))
            linked = [(w, plan.now, c) for w, c in zip(eu.w_after, eu.co_after, strict=True)]
            before = [None if new else (w, t, c) for new, w, t, c in
                      zip(eu.new, eu.w_before, eu.last_ts_before, eu.co_before, strict=True)]
            if dry:
                want, what = (before, "link") if op["op"] == "link" else (linked, "unlink")
                if state != want:
                    raise InvalidInput(
                        f"cannot {what} {op['a']} ↔ {op['b']}: recalls have written to these "
                        "edges since; the link now belongs to the memory and decays like "
                        "any other co-activation")
                continue
            if op["op"] == "link":
                apply_plan(plan, m.nodes, m.edges)
                m.journal_plan(journal, plan, sync=True)
                continue
            back = [(p, b) for p, b in zip(pairs, before, strict=True) if b is not None]
            gone = [p for p, b in zip(pairs, before, strict=True) if b is None]
            if gone:
                m.drop_edges(journal, gone)
            ids = [m.edges.upsert(s, d, w=w, last_ts=t, co_count=c) for (s, d), (w, t, c) in back]
            if ids:
                m.journal_commit(journal, edges=ids, sync=True)

    # -- forget ----------------------------------------------------------------------------
    def forget(self, *, node: str | None = None, session: str | None = None,
               anchor: str | None = None, why: str | None = None,
               by: str = "user") -> dict[str, Any]:
        """Remove a node, a session or an anchor with everything it owns, including
        LanceDB's older versions and Kuzu's free pages; records that it happened (ids and
        counts, not the text). See :mod:`akasha_explorer.curate.forget`."""
        from .forget import forget
        return forget(self, node=node, session=session, anchor=anchor,  # type: ignore[arg-type]
                      by=by, why=why)


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
