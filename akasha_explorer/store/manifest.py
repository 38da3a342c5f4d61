"""``<store>/akasha.json``: what a store is and how it was built.

Records the format version, the settings the store was built with (SPEC: a store always
replays with its own values), the embedding model name and dimension (a store refuses a
different model rather than mix vectors) and the tokenizer version. Written atomically.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InvalidSettings, ModelMismatch, SchemaMismatch, StoreError

__all__ = ["FORMAT", "FORMAT_VERSION", "Manifest"]

FORMAT = "akasha-store"
FORMAT_VERSION = 1


@dataclass
class Manifest:
    """Contents of ``akasha.json``."""

    settings: Settings
    model: str
    dim: int
    tokenizer: str
    created: str = field(
        default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    format_version: int = FORMAT_VERSION

    @staticmethod
    def path(folder: Path) -> Path:
        return Path(folder) / "akasha.json"

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": self.format_version, "created": self.created,
                "model": {"name": self.model, "dim": self.dim}, "tokenizer": self.tokenizer,
                "settings": self.settings.to_dict()}

    def write(self, folder: Path) -> None:
        target = self.path(folder)
        tmp = target.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, ensure_ascii=False, indent=2, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        p = cls.path(folder)
        try:
            data = json.loads(p.read_text("utf-8"))
        except (OSError, ValueError) as e:
            raise StoreError(
                f"{p} is missing or unreadable ({e}); is {folder} a memory store?") from e
        if data.get("format") != FORMAT:
            raise StoreError(f"{folder} is not an akasha memory store (no '{FORMAT}' manifest)")
        version = int(data.get("format_version", 0))
        if version > FORMAT_VERSION:
            raise SchemaMismatch(
                f"store {folder} has format version {version}, this code reads up to "
                f"{FORMAT_VERSION}; upgrade akasha-explorer")
        try:
            settings = Settings.from_dict(data.get("settings", {}))
        except InvalidSettings as e:
            raise StoreError(
                f"store {folder} records settings this version does not know: {e}") from e
        return cls(settings=settings, model=data["model"]["name"], dim=int(data["model"]["dim"]),
                   tokenizer=data.get("tokenizer", ""), created=data.get("created", ""),
                   format_version=version)

    def check_model(self, name: str, dim: int, folder: Path) -> None:
        """Refuse to mix vectors of different models."""
        if name != self.model or dim != self.dim:
            raise ModelMismatch(
                f"store {folder} was built with embedding model {self.model!r} (dim {self.dim}); "
                f"refusing to add vectors from {name!r} (dim {dim}). Open it with the "
                "embedder it was built with, or build a new store")
