"""Attribute values every graph tool reads (SPEC §9): one plain type per column.

networkx, GraphML and Gephi each refuse or mangle something: lists, dicts, numpy
scalars, ``None``/NaN, a column mixing numbers and strings, characters XML 1.0 cannot
hold. :func:`clean_column` gives every column exactly one type — ``bool``, ``int``,
``float`` or ``str`` — with lists joined by commas, dicts as JSON, numpy scalars as
Python ones, and a column mixing kinds turned to strings; a missing value (None, NaN,
±inf) is *left out* of that node's attributes (every format supports a missing value,
none supports NaN reliably). :func:`xml_text` replaces what XML 1.0 cannot hold with
U+FFFD and normalises line ends as an XML reader would — only in exported copies; stored
text is never altered.

>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["a", "b"], "x": [1, None], "tags": [["p", "q"], []],
...                    "mix": [1, "two"]})
>>> list(records(df, key="id"))
[('a', {'x': 1.0, 'tags': 'p,q', 'mix': '1'}), ('b', {'tags': '', 'mix': 'two'})]
>>> list(records(pd.DataFrame({"id": ["a", "b"], "s": ["x", None]}), key="id"))
[('a', {'s': 'x'}), ('b', {})]
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["clean_column", "clean_frame", "clean_value", "records", "xml_attr", "xml_cdata",
           "xml_ids", "xml_key_columns", "xml_text"]

_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(s: str) -> str:
    """``s`` with characters XML 1.0 cannot hold replaced by U+FFFD, and line ends as XML
    reads them back (``\\r\\n`` and ``\\r`` become ``\\n``, XML 1.0 §2.11).

    >>> xml_text("ok\\x00\\x1b[0m\\r\\n")
    'ok\\ufffd\\ufffd[0m\\n'
    """
    return _XML_BAD.sub("\ufffd", s.replace("\r\n", "\n").replace("\r", "\n"))


def xml_ids(ids: Sequence[Any]) -> dict[str, str]:
    """A one-to-one map from ids to ids XML 1.0 can hold. :func:`xml_text` alone would map
    U+FFFE and U+FFFF (and every other character XML cannot hold) to one U+FFFD, so two
    session ids differing only there became one node id. Here an id XML can hold stays as
    it is; in one it cannot, each such character is written ``\\u{XXXX}``; should that
    still equal another id, ``~2``, ``~3`` … is appended. Every exported id is unique.

    >>> a, b = "s" + chr(0xFFFE) + ":0", "s" + chr(0xFFFF) + ":0"
    >>> m = xml_ids([a, b, "s:0"])
    >>> print(m[a], m[b], m["s:0"])
    s\\u{FFFE}:0 s\\u{FFFF}:0 s:0
    >>> m = xml_ids([a, m[a]])  # an id that already reads like the escape
    >>> print(m[a])
    s\\u{FFFE}:0~2
    """
    keys = list(dict.fromkeys(str(i) for i in ids))
    out = {k: k for k in keys if k == xml_text(k)}  # representable ids never change
    taken = set(out.values())
    for k in keys:
        if k in out:
            continue
        base = _XML_BAD.sub(lambda m: f"\\u{{{ord(m.group()):04X}}}", k)
        base = base.replace("\r\n", "\\u{000D}\n").replace("\r", "\\u{000D}")
        cand, n = base, 1
        while cand in taken:
            n += 1
            cand = f"{base}~{n}"
        out[k] = cand
        taken.add(cand)
    return out


def xml_key_columns(nodes: pd.DataFrame, ncols: dict[str, list[Any]], edges: pd.DataFrame,
                    ecols: dict[str, list[Any]]) -> None:
    """Replace the ``id`` column of cleaned node columns and the ``source`` / ``target``
    columns of cleaned edge columns by the unique XML ids of :func:`xml_ids` (in place)."""
    ids = xml_ids([*nodes["id"].tolist(), *edges["source"].tolist(),
                   *edges["target"].tolist()])
    ncols["id"] = [ids[str(v)] for v in nodes["id"].tolist()]
    for c in ("source", "target"):
        ecols[c] = [ids[str(v)] for v in edges[c].tolist()]


_ATTR = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;",
                       "\r": "&#13;", "\t": "&#9;"})
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def xml_attr(s: str) -> str:
    """``s`` escaped for a double-quoted XML attribute (line ends and tabs as character
    references, so a reader's attribute normalisation keeps them).

    >>> xml_attr('a "b" <c> & d\\n')
    'a &quot;b&quot; &lt;c&gt; &amp; d&#10;'
    """
    return s.translate(_ATTR)


def xml_cdata(s: str) -> str:
    """``s`` escaped for XML element text.

    >>> xml_cdata("<b> & </b>")
    '&lt;b&gt; &amp; &lt;/b&gt;'
    """
    return s.translate(_TEXT)


def clean_value(v: Any) -> bool | int | float | str | None:
    """One value as a plain scalar, or None when missing.

    >>> clean_value(np.float32(0.5)), clean_value(float("nan")), clean_value({"b": 1})
    (0.5, None, '{"b":1}')
    >>> clean_value(("x", 2)), clean_value({"z", "a"})
    ('x,2', 'a,z')
    """
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                          default=str)
    if isinstance(v, set | frozenset):
        return ",".join(sorted(str(clean_value(x)) for x in v))
    if isinstance(v, list | tuple | np.ndarray):
        return ",".join(str(clean_value(x)) for x in v)
    return str(v)


def clean_column(values: Sequence[Any]) -> list[bool | int | float | str | None]:
    """Values of one column with one type for all: bool if all are bool, int if all are
    int, float if all are numbers, otherwise str (booleans as ``true``/``false``).

    >>> clean_column([1, 2.5, None]), clean_column([True, "x"]), clean_column([1, 2])
    ([1.0, 2.5, None], ['true', 'x'], [1, 2])
    """
    vals = [clean_value(v) for v in values]
    kinds = {type(v) for v in vals if v is not None}
    if not kinds or kinds in ({bool}, {int}, {float}, {str}):
        return vals
    if kinds <= {int, float}:
        return [None if v is None else float(v) for v in vals]
    return [None if v is None else (("true" if v else "false") if isinstance(v, bool)
                                    else str(v)) for v in vals]


def _fast(series: pd.Series) -> list[Any] | None:
    """A numeric or boolean numpy column cleaned without looking at every value."""
    kind = series.dtype.kind if isinstance(series.dtype, np.dtype) else ""
    if kind and kind in "biu":
        return series.tolist()
    if kind == "f":
        vals = series.to_numpy(np.float64)
        col: list[Any] = vals.tolist()
        bad = np.flatnonzero(~np.isfinite(vals))
        for i in bad.tolist():
            col[i] = None
        return col
    return None


def clean_frame(df: pd.DataFrame, *, xml: bool = False) -> dict[str, list[Any]]:
    """Every column of ``df`` cleaned (:func:`clean_column`); with ``xml`` strings also
    go through :func:`xml_text`."""
    out = {}
    for c in df.columns:
        col = _fast(df[c])
        if col is None:
            col = clean_column(df[c].tolist())
        if xml:
            col = [xml_text(v) if isinstance(v, str) else v for v in col]
        out[str(c)] = col
    return out


def records(df: pd.DataFrame, *, key: str | tuple[str, ...], xml: bool = False,
            ) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``(key value(s), attributes)`` per row, attributes cleaned and missing ones left
    out; ``key`` columns (one name or a tuple of names) are not repeated in them."""
    cols = clean_frame(df, xml=xml)
    keys = (key,) if isinstance(key, str) else key
    names = [c for c in cols if c not in keys]
    for i in range(len(df)):
        k = tuple(cols[c][i] for c in keys)
        attrs = {c: cols[c][i] for c in names if cols[c][i] is not None}
        yield (k[0] if isinstance(key, str) else k), attrs
