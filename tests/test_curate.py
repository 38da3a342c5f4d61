"""Curation on real stores: review decisions, merge / split / rename / aliases / mentions,
undo round trips through the audit log, Cypher-looking names stored verbatim, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.errors import InvalidInput, NotFound

from .conftest import tree_digest

NASTY = ["O'Brien", "a}b{c", "back\\slash", "`tick`", "'); MATCH (n) DETACH DELETE n; //",
         "x' OR '1'='1", "$param", "}]->(x) RETURN x //"]


def _snapshot(mem: ak.Memory, *uids: str) -> list[Any]:
    out = []
    for u in uids:
        d = mem.anchors.get(u)
        out.append((d.name, d.kind, d.status, d.note,
                    sorted((a.uid, a.surface) for a in d.aliases),
                    sorted(json.dumps(m.to_dict(), sort_keys=True) for m in d.mentions),
                    sorted((t.uid, t.role, t.status) for t in d.triples)))
    return out


def _count(mem: ak.Memory) -> int:
    return int(mem.store.graph.rows("MATCH (n) WHERE NOT label(n) IN ['Alias', 'AuditLog'] "
                              "RETURN count(n) AS c")[0]["c"])


def _uid(mem: ak.Memory, name: str) -> str:
    return next(a.uid for a in mem.anchors(status=None) if a.name == name)


def test_merge_undo_round_trip(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        a, b = _uid(mem, "HA"), _uid(mem, "Home Assistant")
        before = _snapshot(mem, a, b)
        n_a = len(mem.anchors.get(a).mentions)
        audit = mem.anchors.merge(a, b, why="same thing")
        merged = mem.anchors.get(a)
        assert "Home Assistant" in {x.surface for x in merged.aliases}
        assert len(merged.mentions) > n_a
        assert mem.anchors.get(b).status == "merged"
        assert mem.anchors.get(b).mentions == ()
        entry = mem.audit(limit=1)[0]
        assert (entry.uid, entry.action, entry.why) == (audit, "merge", "same thing")
        mem.undo(audit)
        assert _snapshot(mem, a, b) == before
        with pytest.raises(InvalidInput):
            mem.undo(audit)


def test_split_undo_round_trip(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        lan = _uid(mem, "阿岚")
        before = _snapshot(mem, lan)
        new, audit = mem.anchors.split(lan, ["@lan_the_warrior"], name="lan_the_warrior")
        got = mem.anchors.get(new)
        assert [a.surface for a in got.aliases] == ["@lan_the_warrior"]
        assert {m.surface for m in got.mentions} == {"@lan_the_warrior"}
        assert "@lan_the_warrior" not in {a.surface for a in mem.anchors.get(lan).aliases}
        mem.undo(audit)
        assert _snapshot(mem, lan) == before
        with pytest.raises(NotFound):
            mem.anchors.get(new)  # undoing the split removed the anchor it created


def test_split_moves_the_facts_of_the_split_mentions(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        lan = _uid(mem, "阿岚")
        new, _ = mem.anchors.split(lan, ["Lan", "lan"])
        facts = {(t.predicate, t.quote) for t in mem.triples(anchor=new)}
        assert ("is_a", "Lan is the Ironclad") in facts
        assert ("friend_of", "岚是我大学同学") in {(t.predicate, t.quote)
                                                for t in mem.triples(anchor=lan)}


def test_rename_alias_mention_round_trips(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        a = _uid(mem, "瑞金医院")
        before = _snapshot(mem, a)
        msg = mem.anchors.get(_uid(mem, "阿岚")).mentions[0]
        audits = [mem.anchors.rename(a, "Ruijin Hospital"),
                  mem.anchors.add_alias(a, "瑞金"),
                  mem.anchors.remove_alias(a, "瑞金医院"),
                  mem.anchors.attach(a, msg.msg, msg.span_start, msg.span_end),
                  mem.anchors.detach(a, msg.msg, msg.span_start)]
        assert mem.anchors.get(a).name == "Ruijin Hospital"
        with pytest.raises(InvalidInput):
            mem.anchors.add_alias(a, "瑞金")
        for u in reversed(audits):
            mem.undo(u)
        assert _snapshot(mem, a) == before


@pytest.mark.parametrize("name", NASTY)
def test_cypher_looking_names_are_stored_verbatim(mem: ak.Memory, name: str) -> None:
    mem.ingest([ak.model.RawMessage("s", 0, 1_788_000_000.0, "user", "老周是我的同事",
                                    speaker="Ann")])
    count = _count(mem)
    zhou = _uid(mem, "老周")
    audit = mem.anchors.rename(zhou, name)
    mem.anchors.add_alias(zhou, name + "2")
    got = mem.anchors.get(zhou)
    assert got.name == name
    assert {name, name + "2"} <= {a.surface for a in got.aliases}
    assert mem.anchors(name)[0].uid == zhou
    assert _count(mem) == count  # nothing matched or deleted by the text
    mem.undo(audit)
    assert mem.anchors.get(zhou).name == "老周"


def test_review_decisions_never_touch_raw_messages(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        vectors_before = tree_digest(demo_store / "vectors")
        visited = next(it for it in mem.review(kind="triple") if "西湖" in it.detail)
        plays = next(it for it in mem.review(kind="triple") if "杀戮尖塔" in it.detail)
        merge = next(it for it in mem.review(kind="alias_merge") if "HA" in it.detail)
        cand = mem.review(kind="anchor")[0]
        inj = mem.review(kind="injection")[0]
        mem.review.approve(visited.uid, why="she did go", by="lin")
        mem.review.reject(plays.uid, why="not a fact")
        a_merge = mem.review.approve(merge.uid)
        mem.review.approve(cand.uid)
        mem.review.reject(inj.uid, why="a test from a friend")
        t = {x.uid: x for x in mem.triples()}
        assert t[visited.subject].status == "approved"
        assert t[plays.subject].status == "rejected"
        assert mem.anchors.get(merge.payload["absorb"]).status == "merged"
        assert mem.anchors.get(cand.subject).status == "active"
        decided = {it.uid: it for it in mem.review(status=None)}
        assert (decided[visited.uid].status, decided[visited.uid].decided_by,
                decided[visited.uid].why) == ("approved", "lin", "she did go")
        assert decided[inj.uid].status == "rejected"
        with pytest.raises(InvalidInput):
            mem.review.approve(visited.uid)
        mem.undo(a_merge)
        assert mem.anchors.get(merge.payload["absorb"]).status == "active"
        assert {it.uid for it in mem.review()} >= {merge.uid}
    assert tree_digest(demo_store / "vectors") == vectors_before


def test_review_edit_supersedes_instead_of_editing(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        it = next(it for it in mem.review(kind="triple") if "杀戮尖塔" in it.detail)
        mem.review.edit(it.uid, predicate="plays", object_literal="Slay the Spire")
        old = next(t for t in mem.triples() if t.uid == it.subject)
        new = next(t for t in mem.triples() if t.uid == old.superseded_by)
        assert old.status == "superseded"
        assert old.quote == new.quote
        assert (new.literal, new.status) == ("Slay the Spire", "approved")


def test_cli_anchors_and_review(demo_store: Path) -> None:
    run = CliRunner().invoke
    r = run(cli, ["anchors", str(demo_store), "--search", "lan", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert len(rows) == 1
    assert "@lan_the_warrior" in rows[0]["aliases"]
    r = run(cli, ["anchors", str(demo_store)])
    assert r.exit_code == 0
    assert "阿岚" in r.output
    assert "mentions" in r.output
    r = run(cli, ["review", "list", str(demo_store), "--kind", "triple", "--json"])
    items = json.loads(r.output)
    assert items
    assert all(i["kind"] == "triple" for i in items)
    r = run(cli, ["review", "approve", str(demo_store), items[0]["uid"], "--why", "ok"])
    assert r.exit_code == 0, r.output
    r = run(cli, ["review", "reject", str(demo_store), items[0]["uid"]])
    assert r.exit_code == 1
    assert "already approved" in r.output
    r = run(cli, ["review", "list", str(demo_store), "--status", "approved"])
    assert items[0]["uid"] in r.output
