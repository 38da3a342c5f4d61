"""Extraction at ingest (SPEC §2 step 6, §6): new nodes -> anchors, aliases, mentions,
triples, episodes and review items, written to Kuzu in one transaction of bulk ``COPY`` /
``UNWIND`` statements (never one statement per row).

Steps for one batch of nodes: read their messages from LanceDB; run the extractor; resolve
the candidate surfaces against the store's aliases (:mod:`.resolve`, tier 2 = cosine of the
mean message vectors of two surfaces); add every known alias found in the text
(gazetteer); keep non-overlapping mentions; decide each anchor's status (active /
candidate, the uncertain ones on the review queue); resolve triples to anchors, skip
restatements, supersede changed facts; extend or start time-gap episodes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._timing import phase
from ..graphdb import extraction as gx
from ..graphdb import logs
from ..graphdb.extraction import EPISODE_COLS
from ..graphdb.kuzu_db import EXTRACT_PENDING_KEY
from ..model import ANCHOR_KINDS
from ..vectors import queries as vq
from .base import FUNCTIONAL, Extraction, Extractor, MessageIn
from .normalize import alias_keys, norm
from .resolve import Entity, Gazetteer, Proposal, cluster, select_mentions

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["ExtractReport", "extract_after_ingest", "extract_nodes", "extractor_inputs",
           "uid_for"]

log = logging.getLogger(__name__)

def uid_for(prefix: str, *parts: object) -> str:
    """Stable id from its parts (re-extraction gives the same ids).

    >>> uid_for("an", "岚")
    'an-f9efee67d04b'
    """
    h = hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:12]
    return f"{prefix}-{h}"


@dataclass
class ExtractReport:
    """What one extraction batch added."""

    messages: int = 0
    anchors: int = 0
    aliases: int = 0
    mentions: int = 0
    triples: int = 0
    superseded: int = 0
    episodes: int = 0
    review: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def extractor_inputs(store: Store, node_uids: Sequence[str]) -> list[MessageIn]:
    """The messages of ``node_uids`` as an extractor takes them, in time order, read in bulk
    from LanceDB."""
    cols = ["uid", "node", "session", "seq", "ts", "role", "speaker", "text", "flags"]
    want = set(node_uids)
    if len(want) > 500:
        t = vq.messages(store.vectors, columns=cols)
        rows = [r for r in t.to_pylist() if r["node"] in want]
    else:
        rows = vq.messages_of_nodes(store.vectors, sorted(want), cols, batch=200).to_pylist()
    rows.sort(key=lambda r: (r["ts"], r["session"], r["seq"]))
    return [MessageIn(r["uid"], r["node"], r["session"], float(r["ts"]), r["role"],
                      r["speaker"], r["text"], tuple(r["flags"] or ())) for r in rows]


# -- store reads ---------------------------------------------------------------------------------
def _context_vector(store: Store, msg_uids: Sequence[str]) -> np.ndarray | None:
    nodes = store.mirror.nodes
    rows = [nodes.msg_index[u] for u in msg_uids if u in nodes.msg_index]
    if not rows:
        return None
    v = nodes.msg_vec[np.asarray(rows)].astype(np.float64).mean(axis=0)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


# -- the batch -----------------------------------------------------------------------------------
def extract_after_ingest(store: Store, node_uids: Sequence[str]) -> None:
    """What ingest runs once new nodes reached both stores (``Settings.EXTRACT``): extract
    them with the store's extractor in one Kuzu commit that also clears the
    ``extract_pending`` mark the ingest left (a crash leaves the mark, not half of it)."""
    if node_uids and store.settings.EXTRACT:
        g = store.graph
        with phase("extract"), g.transaction():
            extract_nodes(store, node_uids, store.extractor)
            g.meta_set(EXTRACT_PENDING_KEY, "")


def extract_nodes(store: Store, node_uids: Sequence[str],
                  extractor: Extractor | None = None) -> ExtractReport:
    """Run extraction for newly stored nodes and write the results (see module docstring)."""
    from .rules import RuleExtractor
    t0 = time.perf_counter()
    rep = ExtractReport()
    msgs = extractor_inputs(store, node_uids)
    rep.messages = len(msgs)
    if not msgs:
        return rep
    xs = (extractor or RuleExtractor()).extract(msgs)
    b = _Batch(store, xs)
    b.resolve()
    b.mentions()
    b.decide_status()
    b.triples()
    b.episodes(msgs)
    b.write(rep)
    rep.seconds = time.perf_counter() - t0
    log.info("extracted %d messages: %d anchors, %d mentions, %d triples (%.2fs)",
             rep.messages, rep.anchors, rep.mentions, rep.triples, rep.seconds)
    return rep


class _Batch:
    """Working state of one extraction batch."""

    def __init__(self, store: Store, xs: list[Extraction]) -> None:
        self.store, self.xs, self.s = store, xs, store.settings
        self.existing = gx.aliases(store.graph)
        self.anchor_rows: dict[str, dict[str, Any]] = {}
        self.alias_of: dict[str, str] = {}        # norm -> anchor (existing and new)
        self.anchor_kind: dict[str, str] = {}
        self.anchor_status: dict[str, str] = {}
        for r in self.existing:
            self.alias_of.setdefault(r["norm"], r["anchor"])
            self.anchor_kind[r["anchor"]] = r["kind"]
            self.anchor_status[r["anchor"]] = r["status"]
        self.known_uids = gx.anchor_uids(store.graph)
        self.new_aliases: dict[tuple[str, str], dict[str, Any]] = {}
        self.mention_rows: list[dict[str, Any]] = []
        self.triple_rows: list[dict[str, Any]] = []
        self.fact_rows: list[tuple[str, str, str]] = []
        self.review_rows: list[dict[str, Any]] = []
        self.updates: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.episode_rows: list[dict[str, Any]] = []
        self.in_episode: list[tuple[str, str]] = []
        self.kept: dict[str, list[tuple[int, int, str, str]]] = {}  # msg -> (a, b, surface, anchor)
        self.ts = {x.message.uid: x.message.ts for x in xs}

    # -- resolution ----------------------------------------------------------------------------
    def resolve(self) -> None:
        """Cluster this batch's surfaces with the store's anchors; create new anchors."""
        per_norm: dict[str, dict[str, Any]] = {}
        for x in self.xs:
            for m in x.mentions:
                n = norm(m.surface)
                if not n:
                    continue
                d = per_norm.setdefault(n, {"surfaces": Counter(), "kinds": Counter(),
                                            "conf": 0.0, "msgs": set()})
                d["surfaces"][m.surface] += 1
                d["kinds"][m.kind] += 1
                d["conf"] = max(d["conf"], m.confidence)
                d["msgs"].add(x.message.uid)
        self.per_norm = per_norm
        ents: list[Entity] = []
        by_anchor: dict[str, set[tuple[str, float]]] = defaultdict(set)
        for r in self.existing:
            if r["status"] == "rejected" and r["norm"] in per_norm:
                continue
            by_anchor[r["anchor"]].update(alias_keys(r["surface"], r["kind"]))
        for a, keys in by_anchor.items():
            ents.append(Entity("A:" + a, self.anchor_kind[a], sorted(keys)))
        for n, d in per_norm.items():
            if n in self.alias_of:
                continue  # an alias already: it joins its anchor as is
            kind = _kind(d["kinds"])
            d["kind"] = kind
            top = d["surfaces"].most_common(1)[0][0]
            ents.append(Entity("N:" + n, kind, alias_keys(top, kind)))
        self._ctx: dict[str, np.ndarray | None] = {}
        roots, proposals = cluster(ents, auto=self.s.ALIAS_AUTO_MERGE,
                                   review_min=self.s.ALIAS_REVIEW_MIN, tier2=self._tier2)
        comps: dict[str, list[str]] = defaultdict(list)
        for e, root in roots.items():
            comps[root].append(e)
        root_anchor: dict[str, str] = {}
        for root, members in comps.items():
            anchor = next((m[2:] for m in members if m.startswith("A:")), None)
            new = [m[2:] for m in members if m.startswith("N:")]
            if anchor is None:
                anchor = self._new_anchor(new)
            root_anchor[root] = anchor
            for n in new:
                self.alias_of[n] = anchor
        for p in proposals:
            self._propose_merge(p, root_anchor[roots[p.a]], root_anchor[roots[p.b]])

    def _tier2(self, a: str, b: str) -> float:
        va, vb = self._ctx_of(a), self._ctx_of(b)
        if va is None or vb is None:
            return 0.0
        cos = float(va @ vb)
        return self.s.ALIAS_CONTEXT_BOOST if cos >= self.s.ALIAS_CONTEXT_COS else 0.0

    def _ctx_of(self, ent: str) -> np.ndarray | None:
        if ent not in self._ctx:
            if ent.startswith("N:"):
                msgs = sorted(self.per_norm[ent[2:]]["msgs"])
            else:
                msgs = gx.mentioned_messages(self.store.graph, ent[2:], limit=200)
            self._ctx[ent] = _context_vector(self.store, msgs)
        return self._ctx[ent]

    def _new_anchor(self, norms: list[str]) -> str:
        best = max(norms, key=lambda n: (len(self.per_norm[n]["msgs"]), self.per_norm[n]["conf"],
                                         -len(n), n))
        name = self.per_norm[best]["surfaces"].most_common(1)[0][0]
        kind = _kind(sum((self.per_norm[n]["kinds"] for n in norms), Counter()))
        uid = uid_for("an", best)
        k = 1
        while uid in self.known_uids:
            uid = uid_for("an", best, k)
            k += 1
        self.known_uids.add(uid)
        ts = min(self.ts[m] for n in norms for m in self.per_norm[n]["msgs"])
        self.anchor_rows[uid] = {"uid": uid, "name": name, "kind": kind, "status": "candidate",
                                 "created_ts": ts, "note": ""}
        self.anchor_kind[uid] = kind
        self.anchor_status[uid] = "candidate"
        return uid

    def _propose_merge(self, p: Proposal, a: str, b: str) -> None:
        keep, absorb = sorted((a, b))
        self.review_rows.append({
            "uid": uid_for("rv-alias", keep, absorb), "kind": "alias_merge", "status": "pending",
            "subject": keep, "payload": json.dumps({"keep": keep, "absorb": absorb,
                                                    "via": p.via}),
            "confidence": p.confidence, "created_ts": max(self.ts.values()),
            "decided_ts": None, "decided_by": None, "why": None})

    # -- mentions ------------------------------------------------------------------------------
    def mentions(self) -> None:
        """Gazetteer pass + overlap selection -> MENTIONS rows and new aliases."""
        names = [(r["surface"], r["anchor"], r["kind"]) for r in self.existing
                 if r["status"] != "rejected"]
        for n, a in self.alias_of.items():
            if n in self.per_norm and self.anchor_status.get(a) != "rejected":
                for s in self.per_norm[n]["surfaces"]:
                    names.append((s, a, self.anchor_kind[a]))
        gaz = Gazetteer(names)
        for x in self.xs:
            m = x.message
            cands: list[tuple[int, int, float, str]] = []
            anchors: list[str] = []
            for c in x.mentions:
                known = self.alias_of.get(norm(c.surface))
                if known is not None and self.anchor_status.get(known) != "rejected":
                    cands.append((c.start, c.end, c.confidence, c.surface))
                    anchors.append(known)
            if "injection" not in m.flags:
                for a0, b0, surface, a in gaz.find(m.text):
                    cands.append((a0, b0, 0.7, surface))
                    anchors.append(a)
            keep = select_mentions(cands)
            self.kept[m.uid] = [(cands[i][0], cands[i][1], cands[i][3], anchors[i]) for i in keep]
            for a0, b0, surface, a in self.kept[m.uid]:
                self.mention_rows.append({"from": m.node, "to": a, "msg": m.uid,
                                          "span_start": a0, "span_end": b0, "surface": surface})
                n = norm(surface)
                if (n, a) not in self.new_aliases and not self._has_alias(n, a):
                    self.new_aliases[(n, a)] = {"uid": uid_for("al", a, n), "surface": surface,
                                                "norm": n, "created_ts": m.ts}

    def _has_alias(self, n: str, anchor: str) -> bool:
        if not hasattr(self, "_alias_set"):
            self._alias_set = {(r["norm"], r["anchor"]) for r in self.existing}
        return (n, anchor) in self._alias_set

    # -- anchor status ---------------------------------------------------------------------------
    def decide_status(self) -> None:
        """Active when confident or recurring; candidates with enough mentions go to review."""
        msgs: dict[str, set[str]] = defaultdict(set)
        conf: dict[str, float] = defaultdict(float)
        for x in self.xs:
            for _a0, _b0, surface, a in self.kept.get(x.message.uid, ()):
                msgs[a].add(x.message.uid)
                d = self.per_norm.get(norm(surface))
                conf[a] = max(conf[a], d["conf"] if d else 0.5)
        cand = [a for a in msgs if self.anchor_status.get(a) == "candidate"]
        old = gx.mention_counts(self.store.graph, cand) if cand else {}
        pending = gx.pending_anchor_reviews(self.store.graph, cand) if cand else set()
        for a in cand:
            n = len(msgs[a]) + old.get(a, 0)
            score = conf[a] + 0.1 * (n - 1)
            if score >= self.s.ANCHOR_ACTIVE_SCORE:
                self._set_status(a, "active")
                if a in pending:
                    self.updates["review_auto"].append({"u": uid_for("rv-anchor", a)})
            elif n >= self.s.ANCHOR_REVIEW_MENTIONS and a not in pending:
                self.review_rows.append({
                    "uid": uid_for("rv-anchor", a), "kind": "anchor", "status": "pending",
                    "subject": a, "payload": json.dumps({"anchor": a, "messages": n}),
                    "confidence": round(min(score, 1.0), 3),
                    "created_ts": max(self.ts[m] for m in msgs[a]), "decided_ts": None,
                    "decided_by": None, "why": None})

    def _set_status(self, a: str, status: str) -> None:
        self.anchor_status[a] = status
        if a in self.anchor_rows:
            self.anchor_rows[a]["status"] = status
        else:
            self.updates["anchor_status"].append({"u": a, "s": status})

    # -- triples ---------------------------------------------------------------------------------
    def _speaker(self, m: MessageIn) -> str:
        name = m.speaker or m.role
        n = norm(name)
        a = self.alias_of.get(n)
        if a is None:
            a = uid_for("an", n)
            while a in self.known_uids:
                a = uid_for("an", n, len(self.known_uids))
            self.known_uids.add(a)
            self.anchor_rows[a] = {"uid": a, "name": name, "kind": "person", "status": "active",
                                   "created_ts": m.ts, "note": f"speaker ({m.role})"}
            self.anchor_kind[a] = "person"
            self.anchor_status[a] = "active"
            self.alias_of[n] = a
            self.new_aliases[(n, a)] = {"uid": uid_for("al", a, n), "surface": name, "norm": n,
                                        "created_ts": m.ts}
        elif self.anchor_status.get(a) == "candidate":
            self._set_status(a, "active")
        return a

    def _set_kind(self, a: str, kind: str) -> None:
        """A relation says what an anchor is (Grace works_with me: a person)."""
        if self.anchor_kind.get(a) != "thing":
            return
        self.anchor_kind[a] = kind
        if a in self.anchor_rows:
            self.anchor_rows[a]["kind"] = kind
        else:
            self.updates["anchor_kind"].append({"u": a, "k": kind})

    def _anchor_at(self, msg: str, a0: int, b0: int) -> str | None:
        best, over = None, 0
        for x, y, _s, a in self.kept.get(msg, ()):
            o = min(y, b0) - max(x, a0)
            if o > over:
                best, over = a, o
        return best

    def triples(self) -> None:
        """Resolve triple candidates, skip restatements, supersede changed facts."""
        subjects: set[str] = set()
        todo = []
        for x in self.xs:
            m = x.message
            for t in x.triples:
                s = self._speaker(m) if t.subject.self_ else self._anchor_at(
                    m.uid, t.subject.start, t.subject.end)
                if s is None:
                    continue
                o_anchor = self._speaker(m) if t.object.self_ else (
                    self._anchor_at(m.uid, t.object.start, t.object.end)
                    if t.object.surface is not None else None)
                lit = "" if o_anchor else (t.object.literal or t.object.surface or "")
                if not o_anchor and not lit:
                    continue
                subjects.add(s)
                todo.append((m, t, s, o_anchor, lit))
                if t.predicate in ("friend_of", "works_with", "family_of"):
                    self._set_kind(s, "person")
        current = self._current_triples(subjects)
        for m, t, s, o, lit in todo:
            key = (s, t.predicate, o or "", lit.casefold(), t.slot)
            if any(k == key for k in current.get((s, t.predicate, t.slot), {}).values()):
                continue  # a restatement of a known fact
            uid = uid_for("tr", m.uid, t.start, t.predicate)
            status = "approved" if t.confidence >= self.s.TRIPLE_REVIEW_BELOW else "pending"
            self.triple_rows.append({
                "uid": uid, "predicate": t.predicate, "object_literal": lit,
                "confidence": round(t.confidence, 3), "status": status, "valid_from": m.ts,
                "superseded_by": "", "node": m.node, "span_start": t.start, "span_end": t.end,
                "quote": m.text[t.start:t.end], "created_ts": m.ts, "slot": t.slot})
            self.fact_rows.append((uid, s, "subject"))
            if o:
                self.fact_rows.append((uid, o, "object"))
            if status == "pending":
                self.review_rows.append({
                    "uid": uid_for("rv-triple", uid), "kind": "triple", "status": "pending",
                    "subject": uid, "payload": json.dumps({"triple": uid, "node": m.node}),
                    "confidence": round(t.confidence, 3), "created_ts": m.ts,
                    "decided_ts": None, "decided_by": None, "why": None})
                continue
            slot_cur = current.setdefault((s, t.predicate, t.slot), {})
            if t.predicate in FUNCTIONAL or t.change:
                for old in list(slot_cur):
                    self.updates["supersede"].append({"u": old, "by": uid})
                    del slot_cur[old]
            slot_cur[uid] = key

    def _current_triples(self, subjects: set[str]) -> dict[tuple[str, str, str], dict[str, Any]]:
        out: dict[tuple[str, str, str], dict[str, Any]] = {}
        if not subjects:
            return out
        rows = gx.current_triples(self.store.graph, sorted(subjects))
        for r in rows:
            key = (r["s"], r["p"], r["o"] or "", (r["lit"] or "").casefold(), r["slot"] or "")
            if r["status"] == "approved":
                out.setdefault((r["s"], r["p"], r["slot"] or ""), {})[r["uid"]] = key
            else:  # pending: a restatement is skipped, but it supersedes nothing
                out.setdefault((r["s"], r["p"], r["slot"] or ""), {})
        return out

    # -- episodes --------------------------------------------------------------------------------
    def episodes(self, msgs: list[MessageIn]) -> None:
        """Time-gap episodes per session: extend the session's last one or start a new one."""
        span: dict[str, list[float]] = {}
        session: dict[str, str] = {}
        for m in msgs:
            s = span.setdefault(m.node, [m.ts, m.ts])
            s[0], s[1] = min(s[0], m.ts), max(s[1], m.ts)
            session[m.node] = m.session
        sessions = sorted(set(session.values()))
        last: dict[str, dict[str, Any]] = {}
        count: Counter[str] = Counter()
        for r in gx.gap_episodes(self.store.graph, sessions):
            count[r["session"]] += 1
            if r["session"] not in last or r["end_ts"] > last[r["session"]]["end_ts"]:
                last[r["session"]] = dict(r, new=False)
        gap = self.s.EPISODE_GAP
        for node in sorted(span, key=lambda u: (span[u][0], u)):
            sid, (a, b) = session[node], span[node]
            ep = last.get(sid)
            if ep is None or a - ep["end_ts"] > gap:
                count[sid] += 1
                ep = {"uid": uid_for("ep", "gap", sid, count[sid]), "kind": "gap",
                      "label": f"{sid} #{count[sid]}", "session": sid, "start_ts": a,
                      "end_ts": b, "new": True}
                self.episode_rows.append(ep)
                last[sid] = ep
            elif b > ep["end_ts"]:
                ep["end_ts"] = b
                if not ep["new"]:
                    self.updates["episode_end"].append({"u": ep["uid"], "t": b})
            self.in_episode.append((node, ep["uid"]))

    # -- write -----------------------------------------------------------------------------------
    def write(self, rep: ExtractReport) -> None:
        g = self.store.graph
        used = {r["to"] for r in self.mention_rows} | {a for _, a, _ in self.fact_rows}
        anchors = [r for u, r in self.anchor_rows.items() if u in used]
        pairs = [(r, a) for (_n, a), r in self.new_aliases.items()
                 if a in used or a not in self.anchor_rows]
        aliases = [r for r, _ in pairs]
        ep_rows = [{k: e[k] for k in EPISODE_COLS} for e in self.episode_rows]
        seen_rv = logs.review_uids_among(g, [r["uid"] for r in self.review_rows])
        review = [r for r in self.review_rows if r["uid"] not in seen_rv and (
            r["kind"] != "anchor" or r["subject"] in used or r["subject"] not in self.anchor_rows)]
        review = list({r["uid"]: r for r in review}.values())
        u = self.updates
        gx.write_extraction(g, anchors=anchors, aliases=pairs, mentions=self.mention_rows,
                            triples=self.triple_rows, facts=self.fact_rows, episodes=ep_rows,
                            in_episode=self.in_episode, review=review, updates=u)
        self.store.anchors_changed()
        rep.anchors, rep.aliases = len(anchors), len(aliases)
        rep.mentions, rep.triples = len(self.mention_rows), len(self.triple_rows)
        rep.superseded, rep.episodes = len(u["supersede"]), len(ep_rows)
        rep.review = len(review)


def _kind(votes: Counter[str]) -> str:
    for k in ANCHOR_KINDS:
        if votes.get(k) and k != "thing":
            return k
    return "thing"
