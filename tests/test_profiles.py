"""Profiles on real stores (issue 13): a store records its profile and term rules; a store
made before profiles existed reads as v1 and keeps working; ``migrate`` switches a store and
rebuilds its lexical terms; a read-only open of a store with stale terms indexes them in
memory and writes nothing."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.config import Settings
from akasha_explorer.errors import ModelMismatch
from akasha_explorer.store.manifest import tokenizer_id
from akasha_explorer.text.tokenize import TOKENIZER_VERSION

from .conftest import tree_digest

CHAT = [
    {"role": "user", "content": "和阿岚打杀戮尖塔，死在第二层"},
    {"role": "assistant", "content": "可惜！第二层是哪个 boss？"},
    {"role": "user", "content": "手指换药了，医生说恢复得不错"},
    {"role": "assistant", "content": "太好了，记得按时换药。"},
    {"role": "user", "content": "we visited three cities last summer"},
    {"role": "assistant", "content": "Which city did you like best?"},
]
V1_ONLY = ("FTS_CJK_MIN_LEN", "FTS_CJK_JOIN", "FTS_CJK_SUBWORDS", "FTS_STEM", "FTS_SKIP_UNSEEN",
           "HYBRID", "CONTEXT_NEIGHBOR", "GRAPH_SETTLE", "FUSION_DENSE_WEIGHT", "FUSION_POOL")


def _store(path: Path, settings: Settings) -> Path:
    with ak.open(path, settings) as mem:
        mem.ingest(CHAT, session="s", replay=True, progress=False)
    return path


def _make_old(path: Path) -> None:
    """Rewrite the manifest as the version before profiles wrote it: format 1, no profile,
    the segmenter alone as tokenizer, no setting this version added."""
    p = path / "akasha.json"
    data = json.loads(p.read_text("utf-8"))
    data["format_version"] = 1
    data.pop("profile")
    data["tokenizer"] = TOKENIZER_VERSION
    for name in V1_ONLY:
        data["settings"].pop(name)
    p.write_text(json.dumps(data), "utf-8")


def _hits(mem: ak.Memory, word: str) -> list[str]:
    """The query's terms that some message holds (in a store this small every term's IDF
    is below FTS_MIN_IDF, so V1 *keeps* none; the index is what is checked)."""
    t = mem.recall(word, now=mem.last_ts() + 60, log=False)
    return [x.term for x in t.seeds.terms if x.df > 0]


def test_a_small_store_keeps_its_query_terms(store_path: Path, embedder) -> None:
    """A store of six messages: v1 keeps no query term (every IDF is under FTS_MIN_IDF),
    v2 keeps them and the lexical channel finds the turn."""
    _store(store_path, Settings())
    with ak.open(store_path, read_only=True) as mem:
        now = mem.last_ts() + 60
        v2 = mem.recall("换药 cities", now=now, log=False)
        v1 = mem.recall("换药 cities", now=now, log=False, settings=Settings.profile("v1"))
    assert {(t.term, t.kept) for t in v2.seeds.terms} == {("换药", True), ("citi", True)}
    firsts = {v2.messages[u][0]["text"][:4] for u in v2.floor.uids[:2]}
    assert firsts == {"手指换药", "we v"} and all(s.startswith("FTS")
                                                for s in v2.floor.sources[:2])
    # v1: no two-character Chinese word, and "cities" (df 1 of 6) is under FTS_MIN_IDF
    assert [(t.term, t.reason) for t in v1.seeds.terms] == [("cities", "low_idf")]


def test_a_word_said_often_still_counts(store_path: Path, embedder) -> None:
    """Sixty messages, "painting" in 15 and "kids" in 15 (IDF about 1.4, under V1's floor of
    3.5): v2 keeps both words (FTS_MIN_IDF = 1.0) and the one message that holds both
    comes first; under V1's floor both are dropped as low_idf and no lexical hit exists."""
    chat = ([{"role": "user", "content": f"spent the evening on the painting, part {k}"}
             for k in range(14)]
            + [{"role": "user", "content": f"the kids had swimming lesson number {k}"}
               for k in range(14)]
            + [{"role": "user", "content": "took the kids painting by the lake today"}]
            + [{"role": "user", "content": f"cooked dinner, recipe {k} from the blog"}
               for k in range(31)])
    with ak.open(store_path, Settings()) as mem:
        mem.ingest(chat, session="s", progress=False)
        now = mem.last_ts() + 60
        v2 = mem.recall("painting with the kids", now=now, log=False)
        v1_floor = mem.recall("painting with the kids", now=now, log=False,
                              settings=mem.settings.replace(FTS_MIN_IDF=3.5))
    assert {(t.term, t.kept) for t in v2.seeds.terms} == {("paint", True), ("kid", True)}
    assert v2.messages[v2.floor.uids[0]][0]["text"].startswith("took the kids painting")
    assert {(t.term, t.reason) for t in v1_floor.seeds.terms} == {("paint", "low_idf"),
                                                                  ("kid", "low_idf")}


def test_a_new_store_records_its_profile_and_term_rules(store_path: Path, embedder) -> None:
    _store(store_path, Settings())
    data = json.loads((store_path / "akasha.json").read_text("utf-8"))
    assert data["profile"] == "v2" and data["format_version"] == 2
    assert data["tokenizer"] == tokenizer_id(Settings())
    with ak.open(store_path, read_only=True) as mem:
        assert mem.store.manifest.profile == "v2" and mem.settings == Settings()
        assert _hits(mem, "阿岚") == ["阿岚"]          # a one-word Chinese query is a term
        assert _hits(mem, "city") == ["citi"]          # and "city" finds "cities"


def test_a_store_from_before_profiles_reads_as_v1(store_path: Path, embedder) -> None:
    _store(store_path, Settings.profile("v1"))
    with ak.open(store_path, read_only=True) as mem:
        before = mem.recall("和阿岚打杀戮尖塔", now=mem.last_ts() + 60, log=False).to_dict()
    _make_old(store_path)
    digest = tree_digest(store_path)
    with ak.open(store_path, read_only=True) as mem:
        assert mem.store.manifest.profile == "v1" and mem.settings == Settings.profile("v1")
        assert mem.store.manifest.tokenizer == tokenizer_id(Settings.profile("v1"))
        again = mem.recall("和阿岚打杀戮尖塔", now=mem.last_ts() + 60, log=False).to_dict()
        assert _hits(mem, "阿岚") == []                # V1's rules: no two-character word
    assert tree_digest(store_path) == digest         # nothing rewritten on the way
    for part in ("messages", "writeback"):
        before.pop(part)
        again.pop(part)
    assert again == before


def test_migrate_switches_the_profile_and_rebuilds_the_terms(store_path: Path,
                                                            embedder) -> None:
    _store(store_path, Settings.profile("v1"))
    _make_old(store_path)
    with ak.open(store_path) as mem:
        edges = mem.stats()["edges"]
        diff = mem.migrate("v2")
        assert diff["HYBRID"] == (False, True) and diff["FTS_CJK_MIN_LEN"] == (3, 2)
        assert _hits(mem, "阿岚") == ["阿岚"]          # the mirror has the new terms at once
        assert mem.migrate("v2") == {}
        assert mem.stats()["edges"] == edges           # the graph it grew stays
    data = json.loads((store_path / "akasha.json").read_text("utf-8"))
    assert data["profile"] == "v2" and data["tokenizer"] == tokenizer_id(Settings())
    with ak.open(store_path, read_only=True) as mem:  # and so has the index on disk
        # v2's settings, but the vectors stay as they were made (a profile changes no vector)
        assert mem.settings == Settings(EMBED_CJK_GLOSS=0.0) and _hits(mem, "换药") == ["换药"]
        assert mem.doctor().ok
    r = CliRunner().invoke(cli, ["migrate", str(store_path), "--profile", "v1"])
    assert r.exit_code == 0, r.output
    assert "profile v2 -> v1" in r.output and "HYBRID: True -> False" in r.output
    r = CliRunner().invoke(cli, ["settings", str(store_path)])
    assert r.exit_code == 0 and "profile v1" in r.output
    with ak.open(store_path, read_only=True) as mem:
        assert mem.settings == Settings.profile("v1") and _hits(mem, "阿岚") == []


def test_migrate_keeps_what_the_store_set_and_refuses_another_model(store_path: Path,
                                                                   embedder) -> None:
    _store(store_path, Settings.profile("v1", CHECKPOINT_EVERY=50, INDEX_SPEAKER=True))
    with ak.open(store_path) as mem:
        mem.migrate("v2")
        assert mem.settings.profile_name() == ("v2", {"CHECKPOINT_EVERY": 50,
                                                      "INDEX_SPEAKER": True,
                                                      "EMBED_CJK_GLOSS": 0.0})
        for change in ({"EMBED_CJK_DIMS": 0}, {"EMBED_CJK_GLOSS": 0.3}):
            with pytest.raises(ModelMismatch, match="embedding model"):
                mem.migrate("v1", **change)
        assert mem.settings.profile_name()[0] == "v2"


def test_a_store_made_before_glosses_keeps_its_vectors(store_path: Path, embedder) -> None:
    """A v2 store written before ``EMBED_CJK_GLOSS`` existed has no such setting in its
    manifest: it reads as 0 (its vectors were made without glosses), so the store opens,
    takes new turns and recalls with the model it was built with."""
    _store(store_path, Settings(EMBED_CJK_GLOSS=0.0, FUSION_DENSE_WEIGHT_CJK=0.1))
    p = store_path / "akasha.json"
    data = json.loads(p.read_text("utf-8"))
    del data["settings"]["EMBED_CJK_GLOSS"]
    p.write_text(json.dumps(data), "utf-8")
    with ak.open(store_path) as mem:
        assert mem.settings.EMBED_CJK_GLOSS == 0.0
        assert mem.store.embedder.name == "all-MiniLM-L6-v2+cjk256"
        mem.add_turn("换药的时候又出血了", "记得按压止血", session="s2")
        assert mem.recall("出血", log=False).ranking()
    assert Settings().EMBED_CJK_GLOSS > 0        # a new store gets them


def test_read_only_open_with_stale_terms_indexes_them_in_memory(
        store_path: Path, embedder, caplog: pytest.LogCaptureFixture) -> None:
    """A store whose recorded term rules are not its settings' (say, a migration stopped
    after the manifest was written): a read-only open rebuilds the terms in memory, says
    so, and changes no file."""
    _store(store_path, Settings.profile("v1"))
    p = store_path / "akasha.json"
    data = json.loads(p.read_text("utf-8"))
    data["profile"] = "v2"
    data["settings"] = Settings(EMBED_CJK_GLOSS=0.0).to_dict()   # v1's vectors
    p.write_text(json.dumps(data), "utf-8")          # v2 settings, v1 terms on disk
    digest = tree_digest(store_path)
    with caplog.at_level(logging.WARNING), ak.open(store_path, read_only=True) as mem:
        assert _hits(mem, "阿岚") == ["阿岚"]
    assert "other term rules" in caplog.text
    assert tree_digest(store_path) == digest
    with ak.open(store_path) as mem:                  # a writer finishes the migration
        assert mem.store.manifest.tokenizer == tokenizer_id(Settings())
    with caplog.at_level(logging.WARNING):
        caplog.clear()
        with ak.open(store_path, read_only=True) as mem:
            assert _hits(mem, "阿岚") == ["阿岚"]
    assert "other term rules" not in caplog.text
