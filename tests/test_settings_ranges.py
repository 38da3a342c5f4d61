"""Settings validated where they are made (issue 22): every setting has a range; anything
outside it is refused in one line by every way settings are made; any value inside it gives
settings on which a real store ingests, recalls and commits without a NaN; a store whose
``akasha.json`` already holds a value outside its range opens, says so (``akasha doctor``)
and is repaired by ``doctor --repair`` or ``akasha migrate``."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import akasha_explorer as ak
from akasha_explorer.bench.locomo import BENCH_SETTINGS
from akasha_explorer.bench.recall import ablations_for
from akasha_explorer.cli import cli
from akasha_explorer.config import (
    PROFILES,
    RELATIONS,
    VECTOR_SETTINGS,
    Settings,
    read_settings,
    setting_docs,
    setting_range,
)
from akasha_explorer.errors import InvalidSettings
from akasha_explorer.ranges import BOOL, Range, Rule, stemmers

from .test_profiles import CHAT

FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
FIXED = VECTOR_SETTINGS
"""A store's vectors are fixed (migrate refuses another model): the store tests leave
these alone."""
ZONES_IN = ["", "UTC", "+08:00", "-05:30", "UTC+8", "Asia/Shanghai", "America/New_York"]
ZONES_OUT = ["Mars/Olympus", "+25:00", "a\nb", "x\x00y", "+08:75", "Beijing"]
"""Time zones TIME_ZONE admits, and some it refuses."""


def _valid(name: str) -> Any:
    return FIELDS[name].metadata["valid"]


# -- the table -------------------------------------------------------------------------------
def test_every_setting_has_a_range_of_its_type() -> None:
    for name, f in FIELDS.items():
        valid = _valid(name)
        if isinstance(f.default, bool):
            assert valid is BOOL, name
        elif isinstance(f.default, int):
            assert isinstance(valid, Range) and valid.whole, name
            assert math.isfinite(valid.lo) and math.isfinite(valid.hi), name
        elif isinstance(f.default, float):
            assert isinstance(valid, Range) and not valid.whole, name
            assert math.isfinite(valid.lo), name  # every number has a floor
        else:
            assert isinstance(valid, Rule), name
    rows = {d["name"]: d for d in setting_docs()}
    assert rows["EDGE_LR"]["range"] == "(0, 1]" and rows["EDGE_LR"]["type"] == "float"
    assert rows["ALIAS_REVIEW_MIN"]["range"] == "[0, 1]; ALIAS_REVIEW_MIN <= ALIAS_AUTO_MERGE"
    assert all(d["range"] for d in rows.values())
    for rel in RELATIONS:
        assert all(n in FIELDS for n in rel.names)


def test_the_values_in_use_are_inside_their_ranges() -> None:
    """The profiles, the benchmarks' ablations and settings, the what-if sliders."""
    from akasha_explorer.widgets.whatif import CONTROLS, slider_bounds

    for name in PROFILES:
        Settings.profile(name)
    for profile in ("v1", "v2"):
        for over in ablations_for(profile).values():
            Settings.profile(profile, **over)
        Settings.profile(profile, **BENCH_SETTINGS)
    for name, (lo, hi, _step, unit, _) in CONTROLS.items():
        assert slider_bounds(name) == (lo, hi), name  # the panel's spans were all valid
        for shown in (lo, hi):
            value = shown * unit
            whole = isinstance(FIELDS[name].default, int)
            Settings().replace(**{name: int(value) if whole else value})


def test_akasha_settings_prints_the_ranges() -> None:
    r = CliRunner().invoke(cli, ["settings"])
    assert r.exit_code == 0, r.output
    assert "EDGE_LR = 0.12  (§3)  range (0, 1]" in r.output
    r = CliRunner().invoke(cli, ["settings", "--json"])
    rows = {d["name"]: d for d in json.loads(r.output)}
    assert rows["DENSE_POOL"]["range"] == "[1, 1_000_000]"


# -- outside: refused in one line ------------------------------------------------------------
@st.composite
def _outside(draw: st.DrawFn) -> tuple[str, Any]:
    """A setting and a value it must refuse."""
    name = draw(st.sampled_from(sorted(FIELDS)))
    valid = _valid(name)
    junk = st.sampled_from([None, [1], {"a": 1}, b"x"])
    if valid is BOOL:
        return name, draw(st.one_of(junk, st.integers(), st.floats(), st.text()))
    if isinstance(valid, Rule):
        bad = (st.text().filter(lambda t: t not in stemmers() and t != "")
               if name == "FTS_STEM" else st.sampled_from(ZONES_OUT)
               if name == "TIME_ZONE" else st.sampled_from(["float16", "Auto ", "int8"])
               if name == "EMBED_DTYPE" else st.sampled_from(["", " ", "\t", "a\nb", "x\x00y"]))
        return name, draw(st.one_of(junk, st.integers(), st.booleans(), bad))
    lo, hi = valid.lo, valid.hi
    below = (st.integers(max_value=math.ceil(lo) - 1) if valid.whole
             else st.floats(max_value=lo, exclude_max=not valid.lo_open, allow_nan=False))
    above = (st.integers(min_value=math.floor(hi) + 1) if valid.whole
             else st.floats(min_value=hi, exclude_min=not valid.hi_open, allow_nan=False)
             if math.isfinite(hi) else st.just(math.inf))
    odd = st.sampled_from([math.nan, math.inf, -math.inf, True, False, "1", 10**400])
    if valid.whole:
        odd = st.one_of(odd, st.floats(lo, hi).filter(lambda x: not x.is_integer()))
    return name, draw(st.one_of(below, above, odd, junk))


@settings(max_examples=400, deadline=None)
@given(_outside())
def test_a_value_outside_its_range_is_refused_in_one_line(bad: tuple[str, Any]) -> None:
    name, value = bad
    shown = setting_range(name).split("; ")[0]
    makers = [lambda: Settings(**{name: value}), lambda: Settings().replace(**{name: value}),
              lambda: Settings.profile("v1", **{name: value}),
              lambda: Settings.from_dict({name: value})]
    for make in makers:
        with pytest.raises(InvalidSettings) as e:
            make()
        msg = str(e.value)
        assert "\n" not in msg and len(msg) < 700, msg
        assert msg.startswith(f"{name}="), msg
        assert shown in msg, msg


def test_a_rule_between_two_settings_is_refused_naming_both() -> None:
    with pytest.raises(InvalidSettings, match=r"^ALIAS_REVIEW_MIN=0\.8 with ALIAS_AUTO_MERGE="
                                              r"0\.7 breaks the rule ALIAS_REVIEW_MIN <= "):
        Settings(ALIAS_REVIEW_MIN=0.8, ALIAS_AUTO_MERGE=0.7)
    with pytest.raises(InvalidSettings, match="EXPAND_AROUND=2 with EXPAND_MAX_AROUND=1"):
        Settings.profile("v2", EXPAND_MAX_AROUND=1)
    Settings(STRENGTH_INIT_BASE=0.6, STRENGTH_INIT_SIGMA=0.4)   # a sum of exactly 1 is kept
    with pytest.raises(InvalidSettings, match="STRENGTH_INIT_BASE"):
        Settings(STRENGTH_INIT_SIGMA=0.31)


def test_stored_values_outside_their_ranges_read_as_the_profiles() -> None:
    s, bad = read_settings({"EDGE_LR": math.nan, "RWR_TOP_EDGES": 0, "HYBRID": "yes",
                            "EXPAND_AROUND": 50, "CROSS_BOOST": 10.0}, profile="v1")
    assert s == Settings.profile("v1", CROSS_BOOST=10.0)
    assert sorted(bad) == ["EDGE_LR", "EXPAND_AROUND", "HYBRID", "RWR_TOP_EDGES"]
    assert bad["RWR_TOP_EDGES"] == (0, "RWR_TOP_EDGES=0 is outside its range [1, 10_000]")
    with pytest.raises(InvalidSettings, match="unknown"):
        read_settings({"NOPE": 1})


# -- inside: a real store works --------------------------------------------------------------
def _inside(name: str) -> st.SearchStrategy[Any]:
    valid = _valid(name)
    if valid is BOOL:
        return st.booleans()
    if name == "FTS_STEM":
        return st.sampled_from(["", *stemmers()])
    if name == "TIME_ZONE":
        return st.sampled_from(ZONES_IN)
    if name == "EMBED_DTYPE":
        return st.sampled_from(["auto", "float32", "bfloat16"])
    assert isinstance(valid, Range), name
    if valid.whole:
        return st.integers(int(valid.lo), int(valid.hi))
    return st.floats(valid.lo, valid.hi if math.isfinite(valid.hi) else None,
                     exclude_min=valid.lo_open, exclude_max=valid.hi_open,
                     allow_nan=False, allow_infinity=False)


def _keep_rules(values: dict[str, Any]) -> dict[str, Any]:
    """Make drawn values keep :data:`RELATIONS` (sort each min/max pair, cap the sum)."""
    v = dict(values)
    for a, b in (("ALIAS_REVIEW_MIN", "ALIAS_AUTO_MERGE"), ("EXPAND_AROUND", "EXPAND_MAX_AROUND")):
        v[a], v[b] = min(v[a], v[b]), max(v[a], v[b])
    v["STRENGTH_INIT_SIGMA"] = min(v["STRENGTH_INIT_SIGMA"], 1.0 - v["STRENGTH_INIT_BASE"])
    return v


def _end(name: str, high: bool) -> Any:
    """The extreme value of a setting's range (an open end: the nearest float inside)."""
    valid = _valid(name)
    if valid is BOOL:
        return high
    if name == "FTS_STEM":
        return stemmers()[-1] if high else ""
    if name == "TIME_ZONE":
        return "+14:00" if high else "-12:00"
    if name == "EMBED_DTYPE":
        return "bfloat16" if high else "float32"
    x, is_open = (valid.hi, valid.hi_open) if high else (valid.lo, valid.lo_open)
    if valid.whole:
        return int(x)
    if math.isinf(x):
        return sys.float_info.max
    return math.nextafter(x, -math.inf if high else math.inf) if is_open else float(x)


VARIED = [n for n in FIELDS if n not in FIXED]
LOWEST = _keep_rules({n: _end(n, False) for n in VARIED})
HIGHEST = _keep_rules({n: _end(n, True) for n in VARIED})


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ak.Memory]:
    """A small real store kept open; each example migrates it (a sequence of migrations)."""
    mem = ak.open(tmp_path_factory.mktemp("ranges") / "store")
    mem.ingest(CHAT, session="s", replay=True, progress=False)
    yield mem
    mem.close()


def _finite(obj: Any) -> None:
    json.dumps(obj, allow_nan=False)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@example(values=LOWEST)
@example(values=HIGHEST)
@given(values=st.fixed_dictionaries({n: _inside(n) for n in VARIED}).map(_keep_rules))
def test_any_value_inside_its_range_recalls_and_commits(values: dict[str, Any],
                                                        small: ak.Memory) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow, no 0/0 on the way
        _live(small, values)


def _live(mem: ak.Memory, values: dict[str, Any]) -> None:
    """Migrate to ``values``, then the agent loop: add a turn, recall, commit, read."""
    mem.migrate("v2", **values)
    assert mem.settings == Settings.profile("v2", **values)
    now = mem.last_ts() + 3600.0
    uid, first = mem.add_turn("还记得阿岚打杀戮尖塔吗 Lan", "记得，第二层。", session="live",
                              ts=now)
    assert first is not None and first.writeback is not None and first.writeback.applied
    seq = mem.store.journal.seq
    trace = mem.recall("which cities did we visit with Lan", now=now + 60)
    _finite(json.loads(trace.to_json()))  # to_json refuses NaN and inf
    plan = mem.commit(trace, uid, reinforce=True)
    _finite(plan.to_dict())
    assert mem.store.journal.seq > seq                                 # the commit journaled
    again = mem.recall("阿岚 手指", now=now + 120, log=False)
    _finite(json.loads(again.to_json()))
    assert again.context().text is not None
    ppr = mem.recall("阿岚", now=now + 180, method="ppr", log=False)
    _finite(json.loads(ppr.to_json()))
    assert mem.expand(uid).node == uid


# -- a store that already holds a value outside its range ------------------------------------
def _spoil(path: Path, **values: Any) -> bytes:
    p = path / "akasha.json"
    data = json.loads(p.read_text("utf-8"))
    data["settings"].update(values)
    p.write_text(json.dumps(data), "utf-8")  # NaN written as NaN, as json.dump does
    return p.read_bytes()


def test_a_stored_value_outside_its_range_is_reported_and_repaired(
        tmp_path: Path, embedder: Any, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "store"
    with ak.open(path) as mem:
        mem.ingest(CHAT, session="s", replay=True, progress=False)
    raw = _spoil(path, EDGE_LR=-5.0, RWR_TOP_EDGES=0, RWR_ALPHA=math.nan,
                 EXPAND_AROUND=50, USE_SALIENCE="yes")
    with caplog.at_level(logging.WARNING), ak.open(path, read_only=True) as mem:
        assert mem.settings == Settings()                    # runs with the profile's values
        t = mem.recall("阿岚", now=mem.last_ts() + 60, log=False)
        _finite(json.loads(t.to_json()))
        report = mem.doctor()
    assert "EDGE_LR=-5.0 is outside its range (0, 1]" in caplog.text
    assert not report.ok and report.kinds("error") == ["invalid_settings"]
    (f,) = report.findings
    assert f.count == 5 and "--repair" in f.message and "EDGE_LR=0.12" in f.message
    assert "RWR_ALPHA=nan is outside its range [0, 1]" in f.examples
    assert (path / "akasha.json").read_bytes() == raw         # a read-only open wrote nothing
    r = CliRunner().invoke(cli, ["doctor", str(path)])
    assert r.exit_code == 1 and "[error] invalid_settings (5)" in r.output, r.output
    with ak.open(path) as mem:                               # a writer works, keeps the file
        uid, _ = mem.add_turn("阿岚在吗", "在", session="s2", ts=mem.last_ts() + 60)
        mem.commit(mem.recall("阿岚", now=mem.last_ts() + 120), uid)
    assert json.loads((path / "akasha.json").read_text("utf-8"))["settings"]["EDGE_LR"] == -5.0
    r = CliRunner().invoke(cli, ["doctor", str(path), "--repair"])
    assert r.exit_code == 0, r.output
    assert "EDGE_LR -5.0 -> 0.12" in r.output and "remaining: nothing" in r.output
    stored = json.loads((path / "akasha.json").read_text("utf-8"))["settings"]
    assert stored == Settings().to_dict()
    with ak.open(path, read_only=True) as mem:
        assert mem.doctor().clean and not mem.store.manifest.invalid


def test_akasha_migrate_sets_a_value_in_place_of_a_stored_one_outside_its_range(
        tmp_path: Path, embedder: Any) -> None:
    path = tmp_path / "store"
    with ak.open(path, Settings.profile("v1")) as mem:
        mem.ingest(CHAT, session="s", replay=True, progress=False)
    _spoil(path, EDGE_LR=1e9, DENSE_POOL=0)
    r = CliRunner().invoke(cli, ["migrate", str(path), "EDGE_LR=0.3"])
    assert r.exit_code == 0, r.output
    assert "EDGE_LR: 1000000000.0 -> 0.3" in r.output and "DENSE_POOL: 0 -> 100" in r.output
    with ak.open(path, read_only=True) as mem:
        assert mem.settings == Settings.profile("v1", EDGE_LR=0.3)
        assert mem.doctor().clean
    r = CliRunner().invoke(cli, ["migrate", str(path), "EDGE_LR=0.3"])
    assert r.exit_code == 0 and "nothing changed" in r.output
