"""A small MessagePack reader, for LangGraph's checkpoints (its serializer writes msgpack
with extension types for the objects it stores; :mod:`.agent_dbs` reads them without
LangGraph installed).

Objects LangGraph encodes as extensions (codes 0–5: a constructor or a pydantic model,
``[module, name, arguments, ...]``) come back as ``{"__class__": name, "__module__":
module, **kwargs}`` (positional arguments under ``"__args__"``); any other extension as
``{"__ext__": code}``. Malformed or truncated input raises :class:`ValueError`.

>>> unpack(bytes([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x93, 0xc0, 0xc3, 0xff]))
{'a': 1, 'b': [None, True, -1]}
>>> unpack(bytes([0x92, 0x01]))
Traceback (most recent call last):
...
ValueError: msgpack data ends early (offset 2)
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["unpack"]

MSGPACK_MAX_DEPTH = 200
"""Deepest nesting read (deeper is refused, not a RecursionError)."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise ValueError(f"msgpack data ends early (offset {len(self.data)})")
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def num(self, fmt: str) -> Any:
        return struct.unpack(">" + fmt, self.take(struct.calcsize(fmt)))[0]

    def value(self, depth: int = 0) -> Any:
        if depth > MSGPACK_MAX_DEPTH:
            raise ValueError("msgpack data nested too deeply")
        b = self.take(1)[0]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0x80 <= b <= 0x8F:
            return self.mapping(b & 0x0F, depth)
        if 0x90 <= b <= 0x9F:
            return [self.value(depth + 1) for _ in range(b & 0x0F)]
        if 0xA0 <= b <= 0xBF:
            return self.text(b & 0x1F)
        return self.tagged(b, depth)

    def tagged(self, b: int, depth: int) -> Any:
        fixed: dict[int, Any] = {0xC0: None, 0xC2: False, 0xC3: True}
        if b in fixed:
            return fixed[b]
        numbers = {0xCA: "f", 0xCB: "d", 0xCC: "B", 0xCD: "H", 0xCE: "I", 0xCF: "Q",
                   0xD0: "b", 0xD1: "h", 0xD2: "i", 0xD3: "q"}
        if b in numbers:
            return self.num(numbers[b])
        sizes = {0xC4: "B", 0xC5: "H", 0xC6: "I", 0xD9: "B", 0xDA: "H", 0xDB: "I",
                 0xDC: "H", 0xDD: "I", 0xDE: "H", 0xDF: "I", 0xC7: "B", 0xC8: "H", 0xC9: "I"}
        if b in (0xC4, 0xC5, 0xC6):
            return self.take(self.num(sizes[b]))
        if b in (0xD9, 0xDA, 0xDB):
            return self.text(self.num(sizes[b]))
        if b in (0xDC, 0xDD):
            return [self.value(depth + 1) for _ in range(self.num(sizes[b]))]
        if b in (0xDE, 0xDF):
            return self.mapping(self.num(sizes[b]), depth)
        if b in (0xC7, 0xC8, 0xC9):
            n = self.num(sizes[b])
            return self.ext(self.num("b"), self.take(n), depth)
        if 0xD4 <= b <= 0xD8:
            code = self.num("b")
            return self.ext(code, self.take(1 << (b - 0xD4)), depth)
        raise ValueError(f"msgpack byte 0x{b:02x} at offset {self.pos - 1} is not valid")

    def text(self, n: int) -> str:
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"invalid UTF-8 in a msgpack string at offset {self.pos - n}"
                             ) from None

    def mapping(self, n: int, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for _ in range(n):
            key = self.value(depth + 1)
            if isinstance(key, list | dict):
                raise ValueError("a msgpack map key is a list or a map")
            out[key] = self.value(depth + 1)
        return out

    def ext(self, code: int, payload: bytes, depth: int) -> Any:
        if not 0 <= code <= 5:
            return {"__ext__": code}
        inner = _Reader(payload)
        parts = inner.value(depth + 1)
        if not isinstance(parts, list) or len(parts) < 2:
            raise ValueError(f"msgpack extension {code} is not [module, name, ...]")
        module, name, *rest = parts
        out: dict[str, Any] = {"__class__": str(name), "__module__": str(module)}
        arg = rest[0] if rest else None
        if isinstance(arg, dict):
            out.update({str(k): v for k, v in arg.items()})
        elif arg is not None:
            out["__args__"] = arg
        return out


def unpack(data: bytes) -> Any:
    """The value ``data`` encodes (one msgpack value; trailing bytes are an error)."""
    r = _Reader(bytes(data))
    out = r.value()
    if r.pos != len(r.data):
        raise ValueError(f"{len(r.data) - r.pos} byte(s) after the msgpack value")
    return out
