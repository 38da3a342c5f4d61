"""NEXT chains stay one chain per session in seq order whatever order the files holding a
session arrive in (issue 18, item 5); a later seq with an earlier time is refused across
files as within one; the doctor sees a chain that is not one and ``--repair`` relinks it."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak
from akasha_explorer.graphdb import chains

from .conftest import tree_digest, write_jsonl

T0 = 1_788_000_000


def _rec(seq: int, ts: int | None = None, session: str = "s") -> dict[str, Any]:
    return {"session_id": session, "seq": seq, "ts": T0 + 60 * seq if ts is None else ts,
            "role": "user", "text": f"message number {seq} about the garden and the bike"}


def _links(mem: ak.Memory, session: str = "s") -> list[tuple[str, str]]:
    return sorted((a, b) for a, b, _, _ in chains.links(mem.store.graph, [session]))


def _chain(seqs: list[int], session: str = "s") -> list[tuple[str, str]]:
    s = sorted(seqs)
    return sorted((f"{session}:{a}", f"{session}:{b}") for a, b in itertools.pairwise(s))


def test_earlier_seqs_arriving_later_are_linked_in_order(mem: ak.Memory, tmp_path: Path) -> None:
    mem.ingest(write_jsonl(tmp_path / "b.jsonl", [_rec(2), _rec(3)]), progress=False)
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", [_rec(0), _rec(1)]), progress=False)
    assert _links(mem) == _chain([0, 1, 2, 3])  # not 3 -> 0
    mem.ingest(write_jsonl(tmp_path / "c.jsonl", [_rec(5), _rec(4, ts=T0 + 60 * 4)]),
               progress=False)
    assert _links(mem) == _chain(list(range(6)))
    assert mem.doctor().clean


@pytest.mark.parametrize("seed", range(4))
def test_any_arrival_order_gives_one_chain(tmp_path: Path, embedder: Any, seed: int) -> None:
    rng = random.Random(seed)
    seqs = list(range(12))
    rng.shuffle(seqs)
    cuts = sorted(rng.sample(range(1, 12), 3))
    parts = [seqs[a:b] for a, b in zip([0, *cuts], [*cuts, 12], strict=True)]
    with ak.open(tmp_path / "s") as mem:
        for k, part in enumerate(parts):
            mem.ingest(write_jsonl(tmp_path / f"p{k}.jsonl", [_rec(q) for q in part]),
                       progress=False)
            done = sorted(q for p in parts[:k + 1] for q in p)
            assert _links(mem) == _chain(done), (parts, k)
        assert mem.doctor().clean
    with ak.open(tmp_path / "s", read_only=True) as mem:  # what Kuzu kept
        assert _links(mem) == _chain(list(range(12)))


def test_a_later_seq_with_an_earlier_time_is_refused_across_files(mem: ak.Memory,
                                                                   tmp_path: Path) -> None:
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", [_rec(0), _rec(1)]), progress=False)
    digest = tree_digest(mem.path / "vectors")
    late = write_jsonl(tmp_path / "b.jsonl", [_rec(2, ts=T0 - 600)])
    with pytest.raises(ak.InvalidInput, match=r"time goes backwards: seq 2 \(this input\) is "
                       r"earlier than seq 1 \(stored\)") as e:
        mem.ingest(late, progress=False)
    assert "session 's'" in str(e.value)
    early = write_jsonl(tmp_path / "c.jsonl", [_rec(5), _rec(3, ts=T0 + 9999)])
    with pytest.raises(ak.InvalidInput, match="time goes backwards"):
        mem.ingest(early, progress=False)
    assert tree_digest(mem.path / "vectors") == digest
    assert _links(mem) == _chain([0, 1])


def test_doctor_sees_a_broken_chain_and_repair_relinks_it(mem: ak.Memory, tmp_path: Path) -> None:
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", [_rec(q) for q in range(5)]
                           + [_rec(q, session="t") for q in range(3)]), progress=False)
    g = mem.store.graph
    with g.transaction():  # damage: a link missing, one out of order, one doubled
        chains.relink(g, [("s:1", "s:2"), ("s:3", "s:4")], [("s:4", "s:1")])
        g.execute("MATCH (a:Turn {uid: 't:0'}), (b:Turn {uid: 't:1'}) CREATE (a)-[:NEXT]->(b)")
    rep = mem.doctor()
    assert "next_links" in rep.kinds("error"), rep.summary()
    fixed = mem.doctor(repair=True)
    assert any("relinked the NEXT chain of 2 session(s)" in r for r in fixed.repairs), \
        fixed.summary()
    assert fixed.clean, fixed.summary()
    assert _links(mem) == _chain(list(range(5)))
    assert _links(mem, "t") == _chain([0, 1, 2], "t")
