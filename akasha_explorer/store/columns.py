"""Per-message columns of the mirror, held compactly (issue 14).

The mirror keeps, per message row, its lexical terms (read by forget, replay, the analysis
views and ``doctor``) and its verbatim text, speaker and sha256 (read by the agent's
context). As Python lists they cost ~0.4 s to build at 100k messages and ~50 bytes an
object; :class:`TermLists` holds the loaded rows as one array of term ids into the
distinct terms, :class:`Column` as the Arrow array they were read as, and each builds a
row's value when asked. Rows set or appended later are kept as Python values.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Any, overload

import numpy as np
import pyarrow as pa
from numpy.typing import ArrayLike

__all__ = ["Column", "TermLists"]

_UNSET = object()


def _row_index(j: int, n: int, what: str) -> int:
    """Row ``j`` of ``n`` rows, negative from the end (IndexError outside)."""
    k = j + n if j < 0 else j
    if not 0 <= k < n:
        raise IndexError(f"{what} row out of range")
    return k


class Column(MutableSequence[Any]):
    """A list of plain values over an Arrow array (``pa.Array`` or ``ChunkedArray``).

    >>> c = Column(pa.chunked_array([["a", None], ["b"]]))
    >>> len(c), c[0], c[1], c[-1]
    (3, 'a', None, 'b')
    >>> c[0] = None; c.append("d"); c[0], c[3], c[1:]
    (None, 'd', [None, 'b', 'd'])
    """

    def __init__(self, base: pa.Array | pa.ChunkedArray) -> None:
        self._base = base.combine_chunks() if isinstance(base, pa.ChunkedArray) else base
        self._n = len(self._base)
        self._set: dict[int, Any] = {}
        self._more: list[Any] = []

    def __len__(self) -> int:
        return self._n + len(self._more)

    def _row(self, j: int) -> Any:
        got = self._set.get(j, _UNSET)
        if got is not _UNSET:
            return got
        if j < self._n:
            return self._base[j].as_py()
        return self._more[j - self._n]

    def _index(self, j: int) -> int:
        return _row_index(j, len(self), "column")

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):
            return [self._row(k) for k in range(*j.indices(len(self)))]
        return self._row(self._index(int(j)))

    def take(self, rows: list[int]) -> list[Any]:
        """The values of several rows (one Arrow read for those it holds).

        >>> Column(pa.array(["a", "b", "c"])).take([2, 0])
        ['c', 'a']
        """
        ks = [self._index(int(j)) for j in rows]
        base = [k for k in ks if k < self._n and k not in self._set]
        got = dict(zip(base, self._base.take(pa.array(base, pa.int64())).to_pylist(),
                       strict=True)) if base else {}
        return [got[k] if k in got else self._row(k) for k in ks]

    def __setitem__(self, j: Any, value: Any) -> None:
        if isinstance(j, slice):
            raise TypeError("set a column one row at a time")
        k = self._index(int(j))
        if k < self._n:
            self._set[k] = value
        else:
            self._more[k - self._n] = value

    def __delitem__(self, j: Any) -> None:
        raise TypeError("message rows are never removed (forget empties them)")

    def insert(self, index: int, value: Any) -> None:
        """Only appending is allowed: message rows never move."""
        if index != len(self):
            raise TypeError("a column only grows at the end")
        self._more.append(value)


class TermLists(MutableSequence[list[str]]):
    """A list of term lists, one per message row: rows ``0 .. len(offsets) - 2`` are
    ``names[ids[offsets[k]:offsets[k + 1]]]``; rows set or appended later are kept as lists.

    >>> t = TermLists([0, 2, 2, 3], [1, 0, 1], ["spire", "lan"])
    >>> len(t), t[0], t[1], t[-1]
    (3, ['lan', 'spire'], [], ['lan'])
    >>> t[0] = []; t.append(["a"]); t[0], t[3], t[2:]
    ([], ['a'], [['lan'], ['a']])
    """

    def __init__(self, offsets: ArrayLike = (0,), ids: ArrayLike = (),
                 names: Sequence[str] = ()) -> None:
        self._off = np.asarray(offsets, np.int64).ravel()
        self._ids = np.asarray(ids, np.int64).ravel()
        self._names = list(names)
        self._base = int(self._off.shape[0]) - 1
        self._set: dict[int, list[str]] = {}
        self._more: list[list[str]] = []

    def __len__(self) -> int:
        return self._base + len(self._more)

    def _row(self, j: int) -> list[str]:
        got = self._set.get(j)
        if got is not None:
            return got
        if j < self._base:
            names = self._names
            return [names[i] for i in self._ids[self._off[j]:self._off[j + 1]].tolist()]
        return self._more[j - self._base]

    def _index(self, j: int) -> int:
        return _row_index(j, len(self), "term list")

    @overload
    def __getitem__(self, j: int) -> list[str]: ...

    @overload
    def __getitem__(self, j: slice) -> list[list[str]]: ...

    def __getitem__(self, j: int | slice) -> Any:
        if isinstance(j, slice):
            return [self._row(k) for k in range(*j.indices(len(self)))]
        return self._row(self._index(int(j)))

    def __setitem__(self, j: Any, value: Any) -> None:
        if isinstance(j, slice):
            raise TypeError("set term lists one row at a time")
        k = self._index(int(j))
        if k < self._base:
            self._set[k] = list(value)
        else:
            self._more[k - self._base] = list(value)

    def __delitem__(self, j: Any) -> None:
        raise TypeError("message rows are never removed (forget empties them)")

    def insert(self, index: int, value: list[str]) -> None:
        """Only appending is allowed: message rows never move."""
        if index != len(self):
            raise TypeError("term lists only grow at the end")
        self._more.append(list(value))
