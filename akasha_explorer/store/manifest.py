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

from ..config import Settings, read_settings
from ..errors import InvalidSettings, ModelMismatch, SchemaMismatch, StoreError
from ..text.tokenize import TOKENIZER_VERSION, TermRules

__all__ = ["FORMAT", "FORMAT_VERSION", "Manifest", "tokenizer_id"]

FORMAT = "akasha-store"
FORMAT_VERSION = 2
"""2: the manifest records the settings' profile (a version-1 manifest reads as ``v1``) and
the lexical term rules with the tokenizer (:func:`tokenizer_id`)."""


def tokenizer_id(settings: Settings) -> str:
    """What a store records as its tokenizer: the segmenter's version and the term rules of
    ``settings``; a store whose record differs has its lexical terms rebuilt on open.

    >>> tokenizer_id(Settings.profile("v1")).endswith("cjk>=3;join=1;sub=0;stop=1;zhstop=0;stem=-")
    True
    """
    return f"{TOKENIZER_VERSION};{TermRules.of(settings).signature}"


def _legacy_tokenizer(recorded: str, settings: Settings) -> str:
    """A version-1 manifest recorded the segmenter only; its rules were V1's (the only ones)."""
    if ";" in recorded or not recorded:
        return recorded
    return f"{recorded};{TermRules.of(settings).signature}"


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
    invalid: dict[str, tuple[Any, str]] = field(default_factory=dict)
    """Settings the file holds that this version refuses (``{name: (value, problem)}``,
    see :func:`~akasha_explorer.config.read_settings`): ``settings`` has the profile's values
    for them, and the file keeps the stored ones until ``akasha migrate`` or ``akasha
    doctor --repair`` writes new ones (:meth:`Store.migrate
    <akasha_explorer.store.store.Store.migrate>`)."""

    @staticmethod
    def path(folder: Path) -> Path:
        return Path(folder) / "akasha.json"

    @property
    def profile(self) -> str:
        """The profile the store's settings are closest to (``v1``, ``v2``)."""
        return self.settings.profile_name()[0]

    def to_json(self) -> dict[str, Any]:
        stored = {**self.settings.to_dict(), **{k: v for k, (v, _) in self.invalid.items()}}
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "created": self.created,
                "model": {"name": self.model, "dim": self.dim}, "tokenizer": self.tokenizer,
                "profile": self.profile, "settings": stored}

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
        """The manifest of the store at ``folder`` (see :meth:`from_json`)."""
        p = cls.path(folder)
        try:
            data = json.loads(p.read_text("utf-8"))
        except (OSError, ValueError) as e:
            raise StoreError(
                f"{p} is missing or unreadable ({e}); is {folder} a memory store?") from e
        return cls.from_json(data, folder)

    @classmethod
    def from_json(cls, data: Any, folder: Path) -> Manifest:
        """A manifest from its JSON (``akasha.json``, or the copy a whole-store export
        carries), checked: the format, a version this code reads, known settings."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise StoreError(f"{folder} is not an akasha memory store (no '{FORMAT}' manifest)")
        version = int(data.get("format_version", 0))
        if version > FORMAT_VERSION:
            raise SchemaMismatch(
                f"store {folder} has format version {version}, this code reads up to "
                f"{FORMAT_VERSION}; upgrade akasha-explorer")
        profile = str(data.get("profile", "v1"))  # before profiles, every store was v1
        stored = dict(data.get("settings", {}))
        stored.setdefault("EMBED_CJK_GLOSS", 0.0)  # older stores' vectors: no glosses
        try:
            settings, invalid = read_settings(stored, profile=profile)
        except InvalidSettings as e:
            raise StoreError(
                f"store {folder} records settings this version does not know: {e}") from e
        return cls(settings=settings, model=data["model"]["name"], dim=int(data["model"]["dim"]),
                   tokenizer=_legacy_tokenizer(data.get("tokenizer", ""), settings),
                   created=data.get("created", ""), format_version=version, invalid=invalid)

    def invalid_note(self, folder: Path) -> str:
        """One line on the stored settings this version refuses (:attr:`invalid`): what is
        wrong, what the store runs with meanwhile, and how to fix it."""
        problems = "; ".join(dict.fromkeys(p for _, p in self.invalid.values()))
        used = ", ".join(f"{k}={getattr(self.settings, k)!r}" for k in self.invalid)
        return (f"store {folder}: akasha.json holds settings this version refuses "
                f"({problems}); the store runs with its profile's values ({used}) until "
                f"`akasha doctor --repair` writes them, or `akasha migrate STORE NAME=VALUE` "
                "sets others")

    def check_model(self, name: str, dim: int, folder: Path) -> None:
        """Refuse to mix vectors of different models."""
        if name != self.model or dim != self.dim:
            raise ModelMismatch(
                f"store {folder} was built with embedding model {self.model!r} (dim {self.dim}); "
                f"refusing to add vectors from {name!r} (dim {dim}). Open it with the "
                "embedder it was built with, or build a new store")
