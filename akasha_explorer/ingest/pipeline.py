"""The ingest pipeline (SPEC §2): validated messages -> nodes in both stores and the mirror.

Order of work for one batch (all-or-nothing up to the store writes):

1. **Check** against the store: an exact re-import (same session, seq and sha256) is a
   no-op; the same session+seq with *different* text refuses the whole batch (raw messages
   are never altered). Nothing has been written when a check fails.
2. **Form nodes**: per session in seq order, a user message plus the assistant replies that
   follow it; an assistant reply with no prompt is an assistant-only node; for transcripts
   (LoCoMo) each line is its own node. Nodes are ordered by (time, session, seq).
3. **Gates** flag noise / injection / duplicate text (flags only, never edits).
4. **Embed** each message's index text in batches (progress bar); node vector = normalised
   mean of its message vectors.
5. **Salience**, causal over ingest order: ``sigma = clamp((1 - cos(v, c)) * GAIN, 0, 1)``
   with ``c`` the normalised sum of all earlier message vectors; node sigma = max.
6. **Initial state**: ``strength = 3 * (0.70 + 0.30 sigma)``, ``resource = 1``.
7. **Write**: LanceDB (messages, then turns; one append each), then one Kuzu transaction
   (sessions, turns, NEXT, IN_SESSION, review items for injection flags); then the mirror.
   With ``behind=True`` (``add_turn``) the graph rows go to the journal instead and reach
   Kuzu with their extraction at the next :meth:`Store.fold_graph
   <akasha_explorer.store.Store.fold_graph>`.
8. **Replay** (optional): each new node's user text is recalled over the memory as it was
   before it, at its time, and the recall written back with the node as current.

A crash between the LanceDB append and the Kuzu commit leaves LanceDB rows without nodes;
re-running the same input deletes those rows and completes the ingest. A crash during
replay is resumed the same way: nodes of the input that were not replayed are replayed. A
crash between the Kuzu commit and the extraction's commit leaves the batch's node uids in
Meta ``extract_pending``; the next ingest (or ``akasha doctor --repair``) extracts them.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import logging
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from ..config import Settings
from ..errors import InvalidInput
from ..extract.pipeline import extract_after_ingest, extract_nodes
from ..graphdb import chains
from ..graphdb import turns as gt
from ..graphdb.kuzu_db import EXTRACT_PENDING_KEY
from ..model import IngestReport, RawMessage, Skipped
from ..text.gates import GATE_META, gate_flags, injection_reasons
from ..text.indexing import index_text
from ..text.tokenize import TermRules, normalize, terms
from ..vectors import messages_schema, turns_schema
from ..vectors import queries as vq
from .importers import Imported
from .replay import replay_rows
from .validate import check_meta, check_role, check_seq, check_session, check_text, check_ts

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["check_messages", "check_time_order", "form_nodes", "ingest", "json_list",
           "pending_extraction", "salience", "stored_sessions"]

log = logging.getLogger(__name__)


def form_nodes(messages: Sequence[RawMessage], *, one_per_message: bool) -> list[list[RawMessage]]:
    """SPEC §2 node formation; nodes ordered by (first time, session, first seq).

    >>> m = [RawMessage("s", i, float(i + 1), r, t) for i, (r, t) in
    ...      enumerate([("assistant", "hello"), ("user", "q"), ("assistant", "a"),
    ...                 ("assistant", "a2"), ("user", "q2")])]
    >>> [[x.seq for x in n] for n in form_nodes(m, one_per_message=False)]
    [[0], [1, 2, 3], [4]]
    """
    by_session: dict[str, list[RawMessage]] = defaultdict(list)
    for m in messages:
        by_session[m.session].append(m)
    nodes: list[list[RawMessage]] = []
    for msgs in by_session.values():
        msgs.sort(key=lambda m: m.seq)
        for a, b in itertools.pairwise(msgs):
            if b.ts < a.ts:
                raise InvalidInput(f"time goes backwards: seq {b.seq} is earlier than seq {a.seq}",
                                   where=f"session {a.session!r}")
        if one_per_message:
            nodes.extend([m] for m in msgs)
            continue
        cur: list[RawMessage] = []
        for m in msgs:
            if m.role == "user" or not cur:
                if cur:
                    nodes.append(cur)
                cur = [m]
            else:
                cur.append(m)
        if cur:
            nodes.append(cur)
    nodes.sort(key=lambda n: (n[0].ts, n[0].session, n[0].seq))
    return nodes


def salience(vectors: NDArray[np.float32], prior_sum: NDArray[np.float64],
             gain: float) -> NDArray[np.float64]:
    """SPEC §2 step 3, causal: message i against the normalised sum of everything before it.

    >>> v = np.array([[1, 0], [1, 0], [0, 1]], np.float32)
    >>> salience(v, np.zeros(2), 2.0).tolist()
    [0.0, 0.0, 1.0]
    """
    v = vectors.astype(np.float64)
    before = prior_sum[None, :] + np.cumsum(v, axis=0) - v
    norm = np.linalg.norm(before, axis=1)
    cos = np.where(norm > 0, (v * before).sum(axis=1) / np.where(norm > 0, norm, 1.0), 1.0)
    return np.clip((1.0 - cos) * gain, 0.0, 1.0)


def _check_against_store(store: Store, msgs: list[RawMessage],
                         report: IngestReport) -> tuple[list[RawMessage], list[str]]:
    """Split into new messages and exact duplicates; refuse conflicting ones. A message
    whose text is stored but whose time, role, speaker, source id or meta differ is not
    stored again (raw messages are never altered) — and reported as skipped, not counted
    as "already stored"."""
    seen: dict[str, str] = {}
    for m in msgs:
        prev = seen.get(m.uid)
        if prev is not None:
            raise InvalidInput(f"session {m.session!r} seq {m.seq} appears twice in the input"
                               + (" with different text" if prev != m.sha256 else ""),
                               where=report.source)
        seen[m.uid] = m.sha256
    stored = store.stored.hashes()
    new: list[RawMessage] = []
    same: list[RawMessage] = []
    for m in msgs:
        sha = stored.get(m.uid)
        if sha is None:
            new.append(m)
        elif sha != m.sha256:
            raise InvalidInput(
                f"session {m.session!r} seq {m.seq} is already stored with different text; raw "
                "messages are never altered — use a new session id, or forget the old one first",
                where=report.source)
        else:
            same.append(m)
    dup_nodes: list[str] = []
    differ = _differences(store, same)
    for m in same:
        fields = differ.get(m.uid)
        if fields:
            report.skipped.append(Skipped(
                where=f"{report.source}: session {m.session!r} seq {m.seq}",
                reason=f"already stored with the same text but a different {', '.join(fields)}; "
                       "the stored message is kept (raw messages are never altered) — use a "
                       "new session id, or forget the old one first, to store this one"))
            continue
        report.duplicates += 1
        node = store.node_of_message(m.uid)
        if node is not None:
            dup_nodes.append(node)
    return new, dup_nodes


def _differences(store: Store, msgs: list[RawMessage]) -> dict[str, list[str]]:
    """For messages already stored with the same text: which other fields differ from the
    stored row (uid -> field names; messages that match exactly are left out)."""
    out: dict[str, list[str]] = {}
    if not msgs:
        return out
    cols = ["uid", "ts", "role", "speaker", "ext_id", "meta"]
    stored = (vq.messages_with_uids(store.vectors, [m.uid for m in msgs], cols)
              if len(msgs) <= 500 else vq.messages(store.vectors, cols))  # else: all
    by_uid = {r["uid"]: r for r in stored.to_pylist()}
    for m in msgs:
        r = by_uid.get(m.uid)
        if r is not None:
            meta = json.loads(r["meta"]) if r["meta"] else {}
            for k in GATE_META:
                meta.pop(k, None)
            fields = [name for name, a, b in (
                ("time", r["ts"], m.ts), ("role", r["role"], m.role),
                ("speaker", r["speaker"], m.speaker), ("source id", r["ext_id"], m.ext_id),
                ("meta", meta, json.loads(json.dumps(m.meta, ensure_ascii=False))))
                if a != b]
            if fields:
                out[m.uid] = fields
    return out


def ingest(store: Store, imported: Imported, *, replay: bool = False,
           progress: bool | None = None, allow_forgotten: bool = False,
           behind: bool = False) -> IngestReport:
    """Run the pipeline for one imported batch (see module docstring). ``behind``: the
    graph's rows and the extraction wait in the journal (``add_turn``'s write-behind, see
    :meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`)."""
    report = IngestReport(source=imported.source, messages_in=len(imported.messages),
                          skipped=list(imported.skipped))
    if behind and store.behind.fold_extract is None:  # the store writes them; extraction is ours
        store.behind.fold_extract = functools.partial(_extract_folded, store)
    t0 = time.perf_counter()
    check_messages(imported)
    messages, unforget = _skip_forgotten(store, imported.messages, report, allow_forgotten)
    new, dup_nodes = _check_against_store(store, messages, report)
    if len(new) > store.settings.INGEST_MAX_MESSAGES:
        raise InvalidInput(f"{len(new):,} new messages in one ingest, more than "
                           f"INGEST_MAX_MESSAGES={store.settings.INGEST_MAX_MESSAGES:,}; split the "
                           "input by session and ingest the parts one after another",
                           where=report.source)
    groups = form_nodes(new, one_per_message=imported.one_node_per_message) if new else []
    check_time_order(store, new)
    pending = pending_extraction(store)
    if pending:  # a crash came between an earlier batch's commit and its extraction
        extract_after_ingest(store, pending)
    if groups:
        _write_batch(store, groups, report, progress, unforget=unforget, behind=behind)
    report.seconds["total_write"] = time.perf_counter() - t0
    if replay:
        uids = [g[0].uid for g in groups] + dup_nodes
        rows = sorted({store.mirror.nodes.index[u] for u in uids if u in store.mirror.nodes.index})
        todo = [i for i in rows if not store.mirror.nodes.replayed[i]]
        t1 = time.perf_counter()
        with store.journaled():  # a replay step whose journal record failed is undone
            report.replayed = replay_rows(store, todo, progress=_progress(progress))
        report.seconds["replay"] = time.perf_counter() - t1
    report.seconds["total"] = time.perf_counter() - t0
    log.info(report.summary())
    return report


def _extract_folded(store: Store, uids: list[str]) -> None:
    """Extract the turns :meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`
    writes, inside its transaction."""
    extract_nodes(store, uids, store.extractor)


def _progress(progress: bool | None) -> bool:
    """A progress bar when asked, or (None) when stderr is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


def check_messages(imported: Imported) -> None:
    """The checks every message passes whatever made it: its time in range (importers
    check it too, with the file and line); messages built in Python (a ``RawMessage``
    list, ``add_turn``) get every field check an importer would make."""
    raw = imported.format == "raw"
    for m in imported.messages:
        where = f"{imported.source}: session {m.session!r} seq {m.seq}"
        check_ts(m.ts, where)
        if raw:
            check_session(m.session, where)
            check_seq(m.seq, where)
            check_role(m.role, where)
            check_text(m.text, where)
            if m.speaker is not None:
                check_text(m.speaker, where, field="speaker")
            check_meta(m.meta, where)


def _skip_forgotten(store: Store, msgs: list[RawMessage], report: IngestReport,
                    allow: bool) -> tuple[list[RawMessage], list[str]]:
    """Drop messages whose uid a forget recorded (one ``Skipped`` per session), or with
    ``allow`` keep them and return their uids (the batch's commit lifts the tombstones)."""
    uids = [m.uid for m in msgs]
    # tombstones as they are: only a forget (which folds first) adds them
    gone = gt.forgotten_among(store.graph_as_is, uids)
    if not gone:
        return msgs, []
    if allow:
        return msgs, sorted(gone)
    per_session: dict[str, int] = {}
    for m in msgs:
        if m.uid in gone:
            per_session[m.session] = per_session.get(m.session, 0) + 1
    for sid, n in per_session.items():
        report.skipped.append(Skipped(
            where=f"{report.source}: session {sid!r}",
            reason=f"{n} message(s) forgotten earlier (akasha forget); ingest with "
                   "allow_forgotten=True (CLI --allow-forgotten) to store them again"))
    return [m for m in msgs if m.uid not in gone], []


def _write_batch(store: Store, groups: list[list[RawMessage]], report: IngestReport,
                 progress: bool | None, unforget: list[str] | None = None, *,
                 behind: bool = False) -> None:
    settings = store.settings
    msgs = [m for g in groups for m in g]
    t0 = time.perf_counter()
    texts = [index_text(m, settings) for m in msgs]
    vecs = store.embeddings.batch(texts, batch_size=settings.EMBED_BATCH,
                             progress=_progress(progress) and len(texts) > 64)
    report.seconds["embed"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    sig = salience(vecs, store.mirror.nodes.msg_sum, settings.SALIENCE_GAIN)
    rules = TermRules.of(settings)
    msg_terms = [terms(t, rules=rules) for t in texts]
    flags, metas = _flags(store, msgs)
    # node rows
    k = 0
    node_rows: list[dict[str, Any]] = []
    for g in groups:
        rows = list(range(k, k + len(g)))
        k += len(g)
        mv = vecs[rows].astype(np.float64).mean(axis=0)
        nv = (mv / (np.linalg.norm(mv) or 1.0)).astype(np.float32)
        node_sigma = float(sig[rows].max())
        s_init = node_sigma if settings.INIT_FROM_NODE_SIGMA else float(sig[rows[0]])
        if not settings.USE_SALIENCE:
            s_init = 0.0
        strength = settings.STRENGTH_CAP * (settings.STRENGTH_INIT_BASE
                                            + settings.STRENGTH_INIT_SIGMA * s_init)
        node_rows.append({"uid": g[0].uid, "rows": rows, "vector": nv, "sigma": node_sigma,
                          "strength": strength, "session": g[0].session, "ts": g[0].ts,
                          "assistant_only": all(m.role == "assistant" for m in g),
                          "flags": sorted({f for r in rows for f in flags[r]})})
    report.seconds["index"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    node_of = {m.uid: nr["uid"] for nr in node_rows for m in (msgs[r] for r in nr["rows"])}
    ords = {nr["uid"]: store.mirror.next_ord + j for j, nr in enumerate(node_rows)}
    graph_rows = _graph_rows(node_rows, msgs, ords, flags, settings)
    graph_rows["unforget"] = unforget or []
    known = store.mirror.nodes.session_code
    new_sessions = sum(sid not in known for sid in graph_rows["sessions"])
    store.write_ingest(
        _messages_table(msgs, node_of, ords, sig, msg_terms, flags, metas, vecs, store.dim),
        _turns_table(node_rows, msgs, ords, store.dim), graph_rows, behind=behind)
    report.sessions_added = new_sessions
    report.seconds["store"] = time.perf_counter() - t2
    for nr in node_rows:
        g = [msgs[r] for r in nr["rows"]]
        store.mirror.add_node(
            nr["uid"], ts=nr["ts"], session=nr["session"], vector=nr["vector"], sigma=nr["sigma"],
            strength=nr["strength"], resource=settings.RESOURCE_INIT,
            assistant_only=nr["assistant_only"], msg_vectors=vecs[nr["rows"]],
            msg_ts=[m.ts for m in g], msg_uids=[m.uid for m in g],
            msg_terms=[msg_terms[r] for r in nr["rows"]],
            msg_flags=[tuple(flags[r]) for r in nr["rows"]], msg_roles=[m.role for m in g],
            msg_texts=[m.text for m in g], msg_speakers=[m.speaker for m in g],
            msg_shas=[m.sha256 for m in g])
    if not behind:  # else with the graph rows, when they are written (Store.fold_graph)
        extract_after_ingest(store, [nr["uid"] for nr in node_rows])
    report.messages_added = len(msgs)
    report.nodes_added = len(node_rows)
    for f in flags:
        for name in f:
            report.flags[name] = report.flags.get(name, 0) + 1


def _flags(store: Store, msgs: list[RawMessage]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Gate flags per message and meta with duplicate links / injection rules."""
    by_text = store.stored.text_hashes()
    flags: list[list[str]] = []
    metas: list[dict[str, Any]] = []
    for m in msgs:
        f = gate_flags(m.text)
        meta = dict(m.meta)
        if "injection" in f:
            meta["injection_rules"] = injection_reasons(m.text)
        key = normalize(" ".join(m.text.split()))
        first = by_text.get(key)
        if first is not None:
            f.append("duplicate")
            meta["dup_of"] = first
        else:
            by_text[key] = m.uid
        flags.append(sorted(f))
        metas.append(meta)
    return flags, metas


def _messages_table(msgs: list[RawMessage], node_of: dict[str, str], ords: dict[str, int],
                    sig: NDArray[np.float64], msg_terms: list[list[str]], flags: list[list[str]],
                    metas: list[dict[str, Any]], vecs: NDArray[np.float32], dim: int) -> pa.Table:
    return pa.table({
        "uid": [m.uid for m in msgs], "node": [node_of[m.uid] for m in msgs],
        "session": [m.session for m in msgs], "seq": [m.seq for m in msgs],
        "ord": [ords[node_of[m.uid]] for m in msgs], "ts": [m.ts for m in msgs],
        "role": [m.role for m in msgs], "speaker": [m.speaker for m in msgs],
        "text": [m.text for m in msgs], "sha256": [m.sha256 for m in msgs],
        "source": [m.source for m in msgs], "ext_id": [m.ext_id for m in msgs],
        "meta": [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in metas],
        "flags": flags, "sigma": sig.tolist(), "terms": msg_terms,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), pa.float32()), dim),
    }, schema=messages_schema(dim))


def _turns_table(node_rows: list[dict[str, Any]], msgs: list[RawMessage], ords: dict[str, int],
                 dim: int) -> pa.Table:
    vec = np.stack([nr["vector"] for nr in node_rows]).astype(np.float32)
    return pa.table({
        "uid": [nr["uid"] for nr in node_rows], "session": [nr["session"] for nr in node_rows],
        "ord": [ords[nr["uid"]] for nr in node_rows], "ts": [nr["ts"] for nr in node_rows],
        "message_uids": [[msgs[r].uid for r in nr["rows"]] for nr in node_rows],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1), pa.float32()), dim),
    }, schema=turns_schema(dim))


def _graph_rows(node_rows: list[dict[str, Any]], msgs: list[RawMessage],
                ords: dict[str, int], flags: list[list[str]], settings: Settings
                ) -> dict[str, Any]:
    """What one batch adds to the graph, as plain data (what the journal keeps for a turn
    whose graph write waits, :meth:`Store.fold_graph`): the Turn columns, each session's
    source and time range, and the review items of injection flags. The rest — which
    sessions are new, the NEXT links — is read off the graph when it is written
    (:func:`~akasha_explorer.graphdb.turns.graph_batch`)."""
    s = settings
    turn: dict[str, list[Any]] = {
        c: [] for c in ("uid", "ord", "session", "ts", "message_uids", "roles", "assistant_only",
                        "sigma", "strength", "strength_ts", "resource", "resource_ts",
                        "recall_count", "replayed", "flags")}
    sessions: dict[str, dict[str, Any]] = {}
    for nr in node_rows:
        g = [msgs[r] for r in nr["rows"]]
        for c, v in (("uid", nr["uid"]), ("ord", ords[nr["uid"]]), ("session", nr["session"]),
                     ("ts", nr["ts"]), ("message_uids", [m.uid for m in g]),
                     ("roles", [m.role for m in g]), ("assistant_only", nr["assistant_only"]),
                     ("sigma", nr["sigma"]), ("strength", nr["strength"]),
                     ("strength_ts", nr["ts"]), ("resource", s.RESOURCE_INIT),
                     ("resource_ts", nr["ts"]), ("recall_count", 0), ("replayed", False),
                     ("flags", nr["flags"])):
            turn[c].append(v)
        last = max(m.ts for m in g)
        got = sessions.get(nr["session"])
        first = g[0]
        if got is None or first.seq < got["seq"]:
            sessions[nr["session"]] = got = {
                "source": first.source, "seq": first.seq,
                "first_ts": min(nr["ts"], got["first_ts"]) if got else nr["ts"],
                "last_ts": max(last, got["last_ts"]) if got else last}
        else:
            got["first_ts"], got["last_ts"] = min(got["first_ts"], nr["ts"]), max(got["last_ts"],
                                                                                  last)
    now = dt.datetime.now(dt.UTC).timestamp()
    review = []
    for nr in node_rows:
        for r in nr["rows"]:
            if "injection" in flags[r]:
                m = msgs[r]
                review.append({"uid": f"rv-injection-{m.uid}", "kind": "injection",
                               "status": "pending", "subject": nr["uid"],
                               "payload": json.dumps({"message": m.uid,
                                                      "rules": injection_reasons(m.text)}),
                               "confidence": 1.0, "created_ts": now, "decided_ts": None,
                               "decided_by": None, "why": None})
    return {"Turn": turn, "sessions": sessions, "review": review}


def stored_sessions(store: Store, sessions: Sequence[str]
                    ) -> dict[str, tuple[list[str], list[tuple[int, float]]]]:
    """For each of ``sessions`` that has stored nodes: their uids, and its stored messages
    as ``(seq, ts)`` — read from the mirror (alive nodes only)."""
    n = store.mirror.nodes
    codes = [n.session_code[s] for s in sessions if s in n.session_code]
    if not codes or not n.n:
        return {}
    out: dict[str, tuple[list[str], list[tuple[int, float]]]] = {}
    rows = np.flatnonzero(n.alive & np.isin(n.session, codes))
    for i in rows.tolist():
        sid = n.sessions[int(n.session[i])]
        nodes, times = out.setdefault(sid, ([], []))
        nodes.append(n.uid[i])
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        times.extend((chains.first_seq(n.msg_uid[j]), float(n.msg_ts[j])) for j in range(a, a + k))
    return out


def check_time_order(store: Store, new: Sequence[RawMessage]) -> None:
    """Within a session, a later seq may not have an earlier time — across ingests too (one
    file is checked by :func:`form_nodes`): a message stored earlier counts as much as one
    of this input."""
    by_session: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
    for m in new:
        by_session[m.session].append((m.seq, m.ts, True))
    for sid, (_, times) in stored_sessions(store, list(by_session)).items():
        rows = sorted(by_session[sid] + [(q, t, False) for q, t in times])
        for (sa, ta, na), (sb, tb, nb) in itertools.pairwise(rows):
            if tb < ta:
                raise InvalidInput(
                    f"time goes backwards: seq {sb} ({'this input' if nb else 'stored'}) is "
                    f"earlier than seq {sa} ({'this input' if na else 'stored'}); within a "
                    "session a later seq needs a later or equal time", where=f"session {sid!r}")


def json_list(values: Sequence[str]) -> str:
    """Compact JSON of a list of strings (Meta values).

    >>> json_list(["a:0", "岚:1"])
    '["a:0","岚:1"]'
    """
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def pending_extraction(store: Store) -> list[str]:
    """Nodes of an earlier batch whose extraction a crash interrupted (Meta
    ``extract_pending``, written in the batch's Kuzu commit and cleared in the extraction's),
    read from the graph as it is: the turns waiting for it are extracted when they are
    written (:meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`)."""
    raw = store.graph_as_is.meta_get(EXTRACT_PENDING_KEY, "") or ""
    if not raw:
        return []
    try:
        uids = json.loads(raw)
    except ValueError:
        return []
    index, alive = store.mirror.nodes.index, store.mirror.nodes.alive
    return [u for u in uids if u in index and alive[index[u]]]
