"""Alias resolution and mention selection — pure functions over plain data (SPEC §6).

Tier 1 is :func:`~akasha_explorer.extract.normalize.alias_keys`: two *entities* (an anchor
already in the store, or a surface first seen in this batch) that share a key are linked
with that key's confidence. Tier 2 is a callback that may lift a link whose confidence sits
between the review floor and the auto-merge bar (the store passes one comparing the two
entities' message vectors). :func:`cluster` then merges links above the bar, never joins
two anchors that already exist (that is a person's decision), and returns everything else
in the review band as proposals — tier 3, the review queue.

>>> ents = [Entity("A:an-1", "person", alias_keys("阿岚", "person")),
...         Entity("N:岚姐", "person", alias_keys("岚姐", "person")),
...         Entity("N:lan", "thing", alias_keys("Lan", "thing")),
...         Entity("N:ha", "thing", alias_keys("HA", "thing")),
...         Entity("N:home assistant", "thing", alias_keys("Home Assistant", "thing"))]
>>> roots, proposals = cluster(ents, auto=0.75, review_min=0.5)
>>> roots["N:岚姐"] == roots["N:lan"] == roots["A:an-1"]
True
>>> [(p.a, p.b, p.via) for p in proposals]
[('N:ha', 'N:home assistant', 'acronym')]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..text.edges import latin_word
from .normalize import alias_keys, is_cjk_text

__all__ = ["Entity", "Gazetteer", "Proposal", "alias_keys", "cluster", "key_via",
           "select_mentions"]


@dataclass(frozen=True)
class Entity:
    """Something to cluster: ``A:<anchor uid>`` (exists) or ``N:<norm>`` (new surface)."""

    id: str
    kind: str
    keys: Sequence[tuple[str, float]]

    @property
    def existing(self) -> bool:
        return self.id.startswith("A:")


@dataclass(frozen=True)
class Proposal:
    """Two clusters that may be one anchor: a review item."""

    a: str
    b: str
    confidence: float
    via: str


def key_via(key: str, conf: float) -> str:
    """Name of the tier-1 rule behind a key ("exact", "honorific", "pinyin", ...).

    >>> key_via("py:lan", 0.8), key_via("岚", 0.9), key_via("lan", 0.8)
    ('pinyin', 'honorific', 'handle')
    """
    if key.startswith("py:"):
        return "pinyin"
    if key.startswith("acr:"):
        return "acronym"
    return {1.0: "exact", 0.9: "honorific", 0.85: "given name"}.get(conf, "handle")


def _links(entities: Sequence[Entity]) -> dict[tuple[str, str], tuple[float, str]]:
    by_key: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for e in entities:
        for k, c in e.keys:
            by_key[k].append((e.id, c))
    best: dict[tuple[str, str], tuple[float, str]] = {}
    for k, members in by_key.items():
        if len(members) < 2 or len(members) > 12:  # a key shared by many says nothing
            continue
        for i, (a, ca) in enumerate(members):
            for b, cb in members[i + 1:]:
                if a == b:
                    continue
                pair = (a, b) if a < b else (b, a)
                c = min(ca, cb)
                if pair not in best or c > best[pair][0]:
                    best[pair] = (c, key_via(k, c))
    return best


def cluster(entities: Sequence[Entity], *, auto: float, review_min: float,
            tier2: Callable[[str, str], float] | None = None
            ) -> tuple[dict[str, str], list[Proposal]]:
    """Union entities linked at ``auto`` or above; return ``(root of each id, proposals)``.

    ``tier2(a, b)`` returns a confidence bonus for a link in the review band.
    """
    parent = {e.id: e.id for e in entities}
    has_anchor = {e.id: e.existing for e in entities}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    links = []
    for (a, b), (c, via) in _links(entities).items():
        if review_min <= c < auto and tier2 is not None:
            c = min(1.0, c + tier2(a, b))
        links.append((c, via, a, b))
    links.sort(key=lambda t: (-t[0], t[2], t[3]))
    pending = []
    for c, via, a, b in links:
        ra, rb = find(a), find(b)
        if ra == rb or c < review_min:
            continue
        if c >= auto and not (has_anchor[ra] and has_anchor[rb]):
            first = has_anchor[ra] or (not has_anchor[rb] and ra < rb)
            keep, other = (ra, rb) if first else (rb, ra)
            parent[other] = keep
            has_anchor[keep] = has_anchor[ra] or has_anchor[rb]
        else:
            pending.append(Proposal(a, b, round(c, 3), via))
    roots = {e.id: find(e.id) for e in entities}
    seen: set[tuple[str, str]] = set()
    proposals = []
    for p in pending:
        ra, rb = roots[p.a], roots[p.b]
        pair = (ra, rb) if ra < rb else (rb, ra)
        if ra != rb and pair not in seen:
            seen.add(pair)
            proposals.append(Proposal(pair[0], pair[1], p.confidence, p.via))
    return roots, proposals


class Gazetteer:
    """Finds known aliases in text: CJK aliases of two or more characters anywhere,
    latin aliases on word boundaries — case-insensitive for people and accounts (``lan``),
    as written for everything else (so ``Ha,`` is not the anchor ``HA``).

    >>> g = Gazetteer([("Lan", "an-1", "person"), ("阿岚", "an-1", "person"),
    ...                ("HA", "an-2", "thing")])
    >>> [(s, a) for _, _, s, a in g.find("今晚跟 lan 阿岚打 HA, ha")]
    [('lan', 'an-1'), ('阿岚', 'an-1'), ('HA', 'an-2')]
    """

    def __init__(self, aliases: Iterable[tuple[str, str, str]]) -> None:
        self._anchor: dict[str, str] = {}
        cjk, ci, cs = set(), set(), set()
        for surface, anchor, kind in aliases:
            s = surface.strip().lstrip("@＠")
            if len(s) < 2:
                continue
            if is_cjk_text(s):
                cjk.add(s)
                self._anchor.setdefault(s, anchor)
            elif kind in ("person", "account"):
                ci.add(s.casefold())
                self._anchor.setdefault(s.casefold(), anchor)
            else:
                cs.add(s)
                self._anchor.setdefault(s, anchor)
        self._cjk = _alternation(cjk, 0)
        self._ci = _alternation(ci, re.I, bounded=True)
        self._cs = _alternation(cs, 0, bounded=True)

    def find(self, text: str) -> list[tuple[int, int, str, str]]:
        """``(start, end, surface, anchor uid)`` of every alias occurrence, in order."""
        out = []
        for rx, fold in ((self._cjk, False), (self._ci, True), (self._cs, False)):
            if rx is None:
                continue
            for m in rx.finditer(text):
                key = m.group().casefold() if fold else m.group()
                out.append((m.start(), m.end(), m.group(), self._anchor[key]))
        return sorted(out)


def _alternation(words: set[str], flags: int, bounded: bool = False) -> re.Pattern[str] | None:
    if not words:
        return None
    body = "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))
    if bounded:
        body = latin_word(body)  # 和Lan打: CJK ends a word
    return re.compile(body, flags)


def select_mentions(cands: Sequence[tuple[int, int, float, str]]) -> list[int]:
    """Indices of non-overlapping mentions: longest first, then most confident.

    >>> select_mentions([(0, 2, 0.5, "燕麦"), (0, 4, 0.8, "燕麦拿铁"), (5, 7, 0.5, "x")])
    [1, 2]
    """
    order = sorted(range(len(cands)), key=lambda i: (-(cands[i][1] - cands[i][0]),
                                                     -cands[i][2], cands[i][0]))
    taken = bytearray(max((c[1] for c in cands), default=0) + 1)  # 1: a kept span covers it
    keep = []
    for i in order:
        a, b = cands[i][0], cands[i][1]
        if a < b:   # linear in the span (a long text has thousands of candidates)
            if taken.find(1, a, b) < 0:
                taken[a:b] = b"\x01" * (b - a)
                keep.append(i)
        elif not (0 < a < len(taken) and taken[a - 1] and taken[a]
                  and _inside(a, [cands[k] for k in keep])):
            keep.append(i)          # an empty span, kept unless strictly inside a kept one
    return sorted(keep, key=lambda i: cands[i][0])


def _inside(pos: int, kept: Sequence[tuple[int, int, float, str]]) -> bool:
    return any(x < pos < y for x, y, _, _ in kept)
