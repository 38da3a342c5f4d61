"""Store health: find every way the stores of one memory disagree, and repair what a crash
can leave behind (``Memory.doctor``, ``akasha doctor``). An area like the others: it takes a
:class:`~akasha_explorer.store.Store` and, to repair, runs the ingest, extraction and
forget areas' own steps — so it sits above them, not inside ``store/``.

What is checked (each problem is a :class:`Finding` with a ``kind``):

- **messages** — LanceDB ``messages``: no uid twice (``duplicate_messages``); every text
  still hashes to its sha256 (``integrity``); every message's node is a Kuzu ``Turn``
  (``orphan_messages``) and listed in that turn's ``message_uids``
  (``unlisted_messages``); every uid a turn lists is stored (``missing_messages``).
- **node vectors** — LanceDB ``turns``: one row per Kuzu ``Turn`` (``duplicate_turns``,
  ``orphan_turns``, ``missing_turn_vectors``).
- **graph** — each turn in exactly one session, the one it names (``session_links``);
  ``NEXT`` is one chain per session in first-seq order (``next_links``, repaired by
  relinking those sessions); one ``COACT`` edge per pair, no
  self-loops (``duplicate_edges``); triples point at existing turns (``orphan_triples``);
  the pruned co-activation totals (SPEC §3, v2) name live turns and are positive
  (``pruned_counts``); ``checked`` says how many co-activations they hold and how many
  live edges have decayed below ``EDGE_PRUNE_BELOW`` or stand outside an end point's
  ``EDGE_BUDGET`` strongest since (the next checkpoint drops them).
- **journal** — complete records only (``torn_journal``), none already folded into Kuzu
  (``checkpointed_journal``).
- **mirror** — the in-memory arrays equal a mirror freshly loaded from the stores
  (``mirror_differs``); no live edge touches a forgotten node (``orphan_edges``). On a
  writable store the journal is checkpointed first, so this compares the running mirror
  with one rebuilt from Kuzu alone.
- **settings** — every value ``akasha.json`` holds is inside its range and keeps the rules
  between settings (``invalid_settings``: written by an older version or by hand; the store
  runs with its profile's values for them meanwhile, and ``--repair`` writes those —
  ``akasha migrate STORE NAME=VALUE`` sets others).
- **leftovers** — temporary files of an interrupted write (``stale_files``), the redo
  folder of a Kuzu transaction a crash interrupted, seen only on a read-only open
  (``graph_redo``; a read-write open restores it, see :mod:`.graphdb.kuzu_db`), nodes whose
  extraction never ran (``extract_pending``), a forget whose purge did not finish
  (``forget_pending``).

Severity: ``error`` means the stores disagree in a way no crash explains (a bug, or damage
from outside); ``leftover`` is what a crash at the wrong moment leaves and the next ingest
or ``repair`` completes — the store reads correctly meanwhile (orphan messages are not
loaded). :meth:`DoctorReport.ok` is true when there is no error; :meth:`DoctorReport.clean`
when there is nothing at all.

>>> r = DoctorReport("s", [Finding("orphan_messages", "leftover", 2, "from a torn ingest")])
>>> r.ok, r.clean, r.kinds()
(True, False, ['orphan_messages'])
>>> print(r.summary())
s: 0 errors, 1 leftover (nothing repaired)
  [leftover] orphan_messages (2): from a torn ingest
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .curate.forget import purge
from .engine.dynamics import edges_to_prune
from .errors import ReadOnlyStore
from .extract.pipeline import extract_after_ingest
from .graphdb import chains
from .graphdb import turns as gt
from .ingest.pipeline import pending_extraction
from .model import sha256_text
from .store.journal import Journal
from .store.mirror import Mirror
from .vectors import queries as vq

if TYPE_CHECKING:
    from .store.store import Store

__all__ = ["DoctorReport", "Finding", "check", "repair", "run"]

log = logging.getLogger(__name__)

SEVERITIES = ("error", "leftover")
_EXAMPLES = 5
STALE = ("journal.tmp", "akasha.json.tmp", "akasha.creating", "graph.kuzu.redo.tmp",
         *(f"graph.kuzu.{scratch}{suffix}" for scratch in ("rebuild", "work")
           for suffix in ("", ".wal", ".shadow", ".lock", ".redo")))
"""Files only an interrupted write leaves in a store folder."""


@dataclass
class Finding:
    """One kind of problem, how many instances, and a few examples."""

    kind: str
    severity: str
    count: int
    message: str
    examples: list[str] = field(default_factory=list)

    def line(self) -> str:
        ex = f" e.g. {', '.join(self.examples[:3])}" if self.examples else ""
        return f"[{self.severity}] {self.kind} ({self.count}): {self.message}{ex}"


@dataclass
class DoctorReport:
    """What :func:`check` found and, after :func:`repair`, what was done and what is left."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    remaining: list[Finding] | None = None
    """Findings of a second check after the repair (None when no repair ran)."""
    seconds: float = 0.0
    repair_data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What :func:`repair` needs of the check (uids, sessions, flags); not reported."""

    @property
    def final(self) -> list[Finding]:
        """The findings that describe the store now (after a repair, the remaining ones)."""
        return self.findings if self.remaining is None else self.remaining

    @property
    def ok(self) -> bool:
        """No error (leftovers of a crash are allowed)."""
        return not any(f.severity == "error" for f in self.final)

    @property
    def clean(self) -> bool:
        """Nothing found at all."""
        return not self.final

    def kinds(self, severity: str | None = None) -> list[str]:
        """Kinds of the current findings (optionally of one severity), sorted."""
        return sorted(f.kind for f in self.final if severity in (None, f.severity))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "clean": self.clean,
                "findings": [asdict(f) for f in self.findings], "checked": self.checked,
                "repairs": self.repairs,
                "remaining": None if self.remaining is None else [asdict(f)
                                                                  for f in self.remaining],
                "seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        """Human-readable report: one line per finding and per repair."""
        cur = self.final
        n_err = sum(f.severity == "error" for f in cur)
        n_left = len(cur) - n_err
        head = (f"{self.path}: {n_err} error{'s' * (n_err != 1)}, {n_left} "
                f"leftover{'s' * (n_left != 1)}")
        head += f" ({len(self.repairs)} repairs)" if self.remaining is not None \
            else " (nothing repaired)"
        lines = [head]
        if self.remaining is not None and self.findings:
            lines.append("found:")
            lines += [f"  {f.line()}" for f in self.findings]
            lines.append("repaired:")
            lines += [f"  - {r}" for r in self.repairs] or ["  - nothing needed"]
            lines.append("remaining:" if cur else "remaining: nothing")
        lines += [f"  {f.line()}" for f in cur]
        return "\n".join(lines)


class _Found:
    def __init__(self) -> None:
        self.items: list[Finding] = []
        self.data: dict[str, Any] = {}

    def add(self, kind: str, severity: str, items: list[Any] | int, message: str) -> None:
        if isinstance(items, int):
            n, ex = items, []
        else:
            n, ex = len(items), [str(x) for x in sorted(items, key=str)[:_EXAMPLES]]
        if n:
            self.items.append(Finding(kind, severity, n, message, ex))


# -- check -------------------------------------------------------------------------------------
def check(store: Store) -> DoctorReport:
    """Every check of the module docstring, on an open store (read-only or writable).

    On a writable store the journal is checkpointed first (as ``close`` would)."""
    t0 = time.perf_counter()
    found = _Found()
    checked: dict[str, int] = {}
    _check_files(store, found)
    _check_settings(store, found)
    _check_journal(store, found, checked)
    if not store.read_only:
        store.checkpoint()
        checked["checkpointed"] = 1
    _check_stores(store, found, checked)
    _check_graph(store, found, checked)
    _check_mirror(store, found, checked)
    rep = DoctorReport(str(store.path), found.items, checked, repair_data=found.data)
    rep.seconds = time.perf_counter() - t0
    return rep


def _check_files(store: Store, found: _Found) -> None:
    stale = [n for n in STALE if (store.path / n).exists()]
    found.add("stale_files", "leftover", stale,
              "temporary files of an interrupted write (journal truncation, manifest write, "
              "or the graph rebuild of a forget); --repair removes them")
    found.data["stale"] = stale
    redo = [p.name for p in (store.graph.redo_path,) if p.exists()]
    found.add("graph_redo", "leftover", redo,
              "the redo folder of a Kuzu transaction a crash interrupted (its rows may be "
              "missing from the graph until then); the next read-write open restores them")


def _check_settings(store: Store, found: _Found) -> None:
    bad = store.manifest.invalid
    found.add("invalid_settings", "error", list(dict.fromkeys(p for _, p in bad.values())),
              "akasha.json holds settings outside their ranges (an older version or a hand "
              "edit); the store runs with its profile's values for them "
              f"({', '.join(f'{k}={getattr(store.settings, k)!r}' for k in bad)}); --repair "
              "writes those, `akasha migrate STORE NAME=VALUE` sets others")
    found.data["invalid_settings"] = bool(bad)


def _check_journal(store: Store, found: _Found, checked: dict[str, int]) -> None:
    records, torn, _, _ = Journal(Path(store.journal.path)).scan()
    good = len(records)
    checked["journal_records"] = good
    found.add("torn_journal", "leftover", torn,
              "journal lines a crash cut short (never acknowledged; ignored on load); "
              "--repair checkpoints and truncates the journal")
    done = int(store.graph.meta_get("journal_seq", "0") or 0)
    old = sum(int(rec.get("seq", 0)) <= done for rec in records)
    found.add("checkpointed_journal", "leftover", old,
              "journal records already folded into Kuzu (a crash after a checkpoint's "
              "commit, before the journal was emptied; skipped on load); --repair truncates")
    found.data["journal_cleanup"] = bool(torn or old)


def _check_stores(store: Store, found: _Found, checked: dict[str, int]) -> None:
    msgs = vq.messages(store.vectors, ["uid", "node", "text", "sha256", "source"])
    uid, node = msgs.column("uid").to_pylist(), msgs.column("node").to_pylist()
    text, sha = msgs.column("text").to_pylist(), msgs.column("sha256").to_pylist()
    source = msgs.column("source").to_pylist()
    checked["messages"] = len(uid)
    turns = gt.turn_message_uids(store.graph)
    t_uid = turns.column("uid").to_pylist()
    t_msgs = dict(zip(t_uid, turns.column("m").to_pylist(), strict=True))
    checked["nodes"] = len(t_uid)
    counts = Counter(uid)
    dups = [u for u, c in counts.items() if c > 1]
    found.add("duplicate_messages", "error", dups,
              "message uids stored more than once in LanceDB; --repair keeps the row its "
              "node lists")
    bad = [u for u, t, h in zip(uid, text, sha, strict=True) if sha256_text(t) != h]
    found.add("integrity", "error", bad,
              "message text no longer matches its sha256 (changed outside akasha); restore "
              "the store from a backup or an export")
    orphans = sorted({u for u, n in zip(uid, node, strict=True) if n not in t_msgs})
    srcs = sorted({s or "?" for u, n, s in zip(uid, node, source, strict=True)
                   if n not in t_msgs})
    found.add("orphan_messages", "leftover", orphans,
              f"messages in LanceDB whose node is not in Kuzu — an ingest of "
              f"{', '.join(srcs) or '?'} was interrupted before it was acknowledged; re-run "
              "that ingest to complete it, or --repair to remove them")
    listed = {m: t for t, ms in t_msgs.items() for m in (ms or ())}
    unlisted = [u for u, n in zip(uid, node, strict=True) if n in t_msgs and listed.get(u) != n]
    found.add("unlisted_messages", "error", unlisted,
              "messages whose node in Kuzu does not list them")
    have = set(uid)
    missing = sorted(m for m in listed if m not in have)
    found.add("missing_messages", "error", missing,
              "message uids a Kuzu turn lists that LanceDB does not hold (the node cannot "
              "be loaded); --repair removes such nodes")
    tv = vq.turns(store.vectors, ["uid"]).column("uid").to_pylist()
    checked["node_vectors"] = len(tv)
    tcount = Counter(tv)
    found.add("duplicate_turns", "error", [u for u, c in tcount.items() if c > 1],
              "node vectors stored more than once in LanceDB; --repair keeps one")
    orphan_t = sorted(u for u in tcount if u not in t_msgs)
    found.add("orphan_turns", "leftover", orphan_t,
              "node vectors in LanceDB without a Kuzu node (same interrupted ingest); "
              "--repair removes them")
    no_vec = sorted(u for u in t_uid if u not in tcount)
    found.add("missing_turn_vectors", "error", no_vec,
              "Kuzu nodes without a node vector in LanceDB (the node cannot be loaded); "
              "--repair removes such nodes")
    broken = sorted(set(no_vec) | {t for t, ms in t_msgs.items()
                                   if not ms or any(m not in have for m in ms)})
    found.data.update(orphan_messages=orphans, orphan_turns=orphan_t, dup_messages=dups,
                      dup_turns=[u for u, c in tcount.items() if c > 1], broken_nodes=broken,
                      listed=listed)


def _check_graph(store: Store, found: _Found, checked: dict[str, int]) -> None:
    g = store.graph
    bad_s = gt.session_link_problems(g)
    found.add("session_links", "error", bad_s,
              "nodes not linked to exactly one session, the one they name")
    nxt = chains.links(g)
    checked["next_edges"] = len(nxt)
    session_of = gt.turn_sessions(g)
    want = chains.wanted(session_of.items())
    have = Counter((a, b) for a, b, _, _ in nxt)
    bad_pairs = ({p for p, c in have.items() if c > 1 or p not in want} | (want - set(have)))
    bad_sessions = sorted(({session_of[u] for p in bad_pairs for u in p if u in session_of}
                           | {x for _, _, x, y in nxt if x != y}
                           | {y for _, _, x, y in nxt if x != y}) - {None})
    found.add("next_links", "error", [f"{a}->{b}" for a, b in bad_pairs],
              "NEXT is not one chain per session in seq order (a link missing, doubled, "
              f"out of order or across sessions, in {len(bad_sessions)} session(s)); "
              "--repair relinks them")
    found.data["next_sessions"] = bad_sessions
    co = gt.coact_edges(g).select(["s", "d"]).to_pydict()
    checked["coact_edges"] = len(co["s"])
    pairs = Counter(zip(co["s"], co["d"], strict=True))
    bad_e = [f"{a}->{b}" for (a, b), c in pairs.items() if c > 1 or a == b]
    found.add("duplicate_edges", "error", bad_e,
              "COACT edges stored twice for one pair, or from a node to itself")
    _check_pruned(store, found, checked)
    orphan_tr = gt.orphan_triples(g)
    found.add("orphan_triples", "error", orphan_tr, "triples whose source node is gone")
    pending = pending_extraction(store)
    found.add("extract_pending", "leftover", pending,
              "nodes whose extraction (anchors, mentions, triples) was interrupted by a "
              "crash; the next ingest or --repair runs it")
    found.data["extract_pending"] = pending
    forgetting = store.graph.meta_get("forget_pending", "") or ""
    found.add("forget_pending", "leftover", [forgetting] if forgetting else [],
              "a forget was interrupted: older LanceDB versions and Kuzu's free pages may "
              "still hold the forgotten text; --repair finishes the purge")
    found.data["forget_pending"] = bool(forgetting)


def _check_pruned(store: Store, found: _Found, checked: dict[str, int]) -> None:
    """Pruned co-activation totals: on live turns, positive; and the edges due for pruning."""
    totals = gt.pruned_coactivations(store.graph)
    checked["pruned_coactivations"] = sum(totals.values())
    bad = [f"{u}: {c}" for u, c in totals.items() if c <= 0 or not store.has_node(u)]
    found.add("pruned_counts", "error", bad,
              "pruned co-activation totals of turns that are gone, or not positive")
    m, s = store.mirror, store.settings
    ed = m.edges
    due = edges_to_prune(ed.src, ed.dst, ed.w, ed.last_ts, ed.alive, m.store_time(),
                         tau=s.EDGE_TAU, below=s.EDGE_PRUNE_BELOW, budget=s.EDGE_BUDGET)
    checked["edges_due_for_pruning"] = int(due.size)


def _check_mirror(store: Store, found: _Found, checked: dict[str, int]) -> None:
    live = store.mirror
    fresh = Mirror(store.dim)
    with _quiet():
        fresh.load(store.graph, store.vectors, Journal(Path(store.journal.path)))
    a, b = live.nodes, fresh.nodes
    alive = [a.uid[i] for i in np.flatnonzero(a.alive)]
    checked["mirror_nodes"] = len(alive)
    diffs: list[str] = []
    if set(alive) != set(b.uid):
        diffs += [f"node {u} only in the running mirror" for u in set(alive) - set(b.uid)]
        diffs += [f"node {u} only in the stores" for u in set(b.uid) - set(alive)]
    common = [u for u in alive if u in b.index]
    ia = np.array([a.index[u] for u in common], np.int64)
    ib = np.array([b.index[u] for u in common], np.int64)
    for name in ("ts", "sigma", "strength", "strength_ts", "resource", "resource_ts",
                 "recall_count", "assistant_only", "replayed", "n_msg", "vec"):
        if not common:
            break
        x, y = getattr(a, name)[ia], getattr(b, name)[ib]
        bad = np.flatnonzero(~np.all((x == y).reshape(len(common), -1), axis=1))
        diffs += [f"node {common[k]} {name}: {_val(x[k])} vs {_val(y[k])}" for k in bad[:3]]
    sa = [a.sessions[int(c)] for c in a.session[ia]]
    sb = [b.sessions[int(c)] for c in b.session[ib]]
    diffs += [f"node {u} session" for u, x, y in zip(common, sa, sb, strict=True) if x != y]
    for u, i, j in zip(common, ia.tolist(), ib.tolist(), strict=True):
        ra = range(int(a.first_msg[i]), int(a.first_msg[i] + a.n_msg[i]))
        rb = range(int(b.first_msg[j]), int(b.first_msg[j] + b.n_msg[j]))
        if ([a.msg_uid[k] for k in ra] != [b.msg_uid[k] for k in rb]
                or [live.msg_terms[k] for k in ra] != [fresh.msg_terms[k] for k in rb]
                or [live.msg_flags[k] for k in ra] != [fresh.msg_flags[k] for k in rb]
                or any(live.msg_text[k] is not None and (live.msg_text[k], live.msg_sha[k])
                       != (fresh.msg_text[x], fresh.msg_sha[x])
                       for k, x in zip(ra, rb, strict=True))
                or not np.array_equal(a.msg_vec[ra.start:ra.stop], b.msg_vec[rb.start:rb.stop])
                or not np.array_equal(a.msg_ts[ra.start:ra.stop], b.msg_ts[rb.start:rb.stop])):
            diffs.append(f"node {u} messages")
    ea, eb = _edges(live), _edges(fresh)
    checked["mirror_edges"] = len(ea)
    for k in sorted(set(ea) ^ set(eb))[:_EXAMPLES]:
        diffs.append(f"edge {k[0]}->{k[1]} only in the {'running mirror' if k in ea else 'stores'}")
    diffs += [f"edge {k[0]}->{k[1]}: {ea[k]} vs {eb[k]}" for k in ea
              if k in eb and ea[k] != eb[k]][:_EXAMPLES]
    if len(live.pending_queries) != len(fresh.pending_queries):
        diffs.append(f"{len(live.pending_queries)} pending query-log rows vs "
                     f"{len(fresh.pending_queries)} in the journal")
    found.add("mirror_differs", "error", diffs,
              "the running mirror differs from the stores (a change was not journaled); "
              "reopen the store — the stores are what counts")
    ed, nd = live.edges, live.nodes
    ids = np.flatnonzero(ed.alive)
    dead = ids[~(nd.alive[ed.src[ids]] & nd.alive[ed.dst[ids]])] if ids.size else ids
    found.add("orphan_edges", "error",
              [f"{nd.uid[int(ed.src[e])]}->{nd.uid[int(ed.dst[e])]}" for e in dead],
              "live co-activation edges touching a forgotten node")


def _val(x: Any) -> str:
    return "vector" if np.ndim(x) else repr(x.item() if hasattr(x, "item") else x)


def _edges(m: Mirror) -> dict[tuple[str, str], tuple[float, float, int]]:
    ed, uid = m.edges, m.nodes.uid
    ids = np.flatnonzero(ed.alive)
    alive = m.nodes.alive
    ids = ids[alive[ed.src[ids]] & alive[ed.dst[ids]]] if ids.size else ids
    return {(uid[int(s)], uid[int(d)]): (float(w), float(t), int(c))
            for s, d, w, t, c in zip(ed.src[ids], ed.dst[ids], ed.w[ids], ed.last_ts[ids],
                                     ed.co_count[ids], strict=True)}


@contextlib.contextmanager
def _quiet() -> Any:
    """Silence the mirror's own warnings while loading the comparison copy."""
    lg = logging.getLogger("akasha_explorer.store.mirror")
    old = lg.level
    lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lg.setLevel(old)


def run(store: Store, *, fix: bool = False) -> DoctorReport:
    """Check that the stores agree (every check of the module docstring) and return the
    report; with ``fix=True`` (writable stores only) :func:`repair` what a crash can leave,
    then check again (``report.repairs`` says what was done, ``report.remaining`` what is
    left). A writable store is checkpointed first."""
    store.check_open()
    report = check(store)
    if fix:
        store.check_write()
        repair(store, report)
    return report


# -- repair ------------------------------------------------------------------------------------
def repair(store: Store, report: DoctorReport) -> DoctorReport:
    """Fix what ``report`` found that can be fixed, record each action in
    ``report.repairs``, then check again into ``report.remaining``."""
    if store.read_only:
        raise ReadOnlyStore(f"store {store.path} is open read-only; open it writable to repair")
    data = report.repair_data
    did = report.repairs
    for name in data.get("stale", ()):
        p = store.path / name
        if p.is_dir():
            import shutil
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
        did.append(f"removed stale file {name}")
    if data.get("invalid_settings"):
        fixed = store.migrate(store.manifest.profile)
        did.append("wrote the profile's values for the settings outside their ranges: "
                   + ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in fixed.items()))
    if data.get("journal_cleanup"):
        store.checkpoint()
        store.journal.truncate()
        did.append("truncated the journal (its complete records are in Kuzu)")
    _repair_lance(store, data, did)
    broken = data.get("broken_nodes", [])
    if broken:
        gt.delete_turns_and_triples(store.graph, broken)
        for u in broken:
            i = store.mirror.nodes.index.get(u)
            if i is not None and store.mirror.nodes.alive[i]:
                store.mirror.nodes.kill(i)
                store.mirror.mark_edges_gone(store.mirror.edges.drop_node(i))
        did.append(f"removed {len(broken)} Kuzu nodes whose messages or vector LanceDB no "
                   f"longer holds: {', '.join(broken[:_EXAMPLES])}")
    relink = data.get("next_sessions", [])
    if relink:
        g = store.graph
        turns = gt.turn_sessions(g, relink)
        with g.transaction():
            chains.relink(g, [(a, b) for a, b, _, _ in chains.links(g, relink)],
                          chains.wanted(turns.items()))
        did.append(f"relinked the NEXT chain of {len(relink)} session(s) in seq order: "
                   f"{', '.join(relink[:_EXAMPLES])}")
    if data.get("forget_pending"):
        purge(store)
        did.append("finished an interrupted forget: removed LanceDB's older versions and "
                   "rebuilt the Kuzu file")
    if data.get("extract_pending"):
        uids = data["extract_pending"]
        extract_after_ingest(store, uids)
        did.append(f"ran the interrupted extraction of {len(uids)} nodes")
    report.remaining = check(store).findings
    return report


def _repair_lance(store: Store, data: dict[str, Any], did: list[str]) -> None:
    v = store.vectors
    orphans = data.get("orphan_messages", [])
    if orphans:
        vq.delete_messages(v, orphans, batch=500)
        store.mirror.orphan_messages = []
        did.append(f"removed {len(orphans)} messages of an interrupted ingest from LanceDB "
                   "(re-run that ingest to add them)")
    orphan_t = data.get("orphan_turns", [])
    if orphan_t:
        vq.delete_turns(v, orphan_t, batch=500)
        did.append(f"removed {len(orphan_t)} node vectors without a node from LanceDB")
    listed = data.get("listed", {})
    for table, dups, key in (("messages", data.get("dup_messages", []), "node"),
                             ("turns", data.get("dup_turns", []), None)):
        if not dups:
            continue
        rows = (vq.messages_with_uids(v, dups) if table == "messages"
                else vq.turns_with_uids(v, dups))
        keep: dict[str, int] = {}
        for k, r in enumerate(rows.select(["uid", *([key] if key else [])]).to_pylist()):
            if r["uid"] not in keep or (key and listed.get(r["uid"]) == r[key]):
                keep[r["uid"]] = k
        kept = rows.take(sorted(keep.values()))
        if table == "messages":
            vq.delete_messages(v, dups, batch=len(dups))
            vq.add_messages(v, kept)
        else:
            vq.delete_turns(v, dups, batch=len(dups))
            vq.add_turns(v, kept)
        did.append(f"kept one row of each of {len(dups)} {table} stored more than once")
    if orphans or orphan_t or data.get("dup_messages") or data.get("dup_turns"):
        store.stored.forget(None)
