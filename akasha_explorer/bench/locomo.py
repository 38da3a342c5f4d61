"""LoCoMo evidence recall (SPEC §10): the LoCoMo corpus for :mod:`.recall`.

For each conversation of a LoCoMo-format file, one store: the sessions ingested in time
order with replay (one node per dialogue line, line time = session time + 30 s per line).
Gold = the nodes whose ``dia_id`` is in the question's evidence (packed ids split on
``[;\\s]+``, malformed or dangling ids dropped and counted; questions left without evidence
excluded and counted). Every line is indexed and embedded as
``"(session date) speaker: text [shares caption]"``, English stop words dropped from the
lexical index (``INDEX_DATE``, ``INDEX_SPEAKER``, ``INDEX_STOPWORDS``) — for every method.

Methods, ablations and scoring: :mod:`.recall`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..config import Settings
from ..embed import Embedder
from ..ingest.importers import read_locomo
from .recall import RANK_METHODS, Corpus, Question, run_recall

__all__ = ["BENCH_SETTINGS", "CATEGORIES", "locomo_corpora", "parse_evidence", "run_locomo",
           "write_reports"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BENCH_SETTINGS = dict(INDEX_DATE=True, INDEX_SPEAKER=True, INDEX_STOPWORDS=True)
"""What every LoCoMo store is built with (the text every method sees)."""

_EVIDENCE = re.compile(r"^D\d+:\d+$")


def parse_evidence(evidence: Sequence[Any], known: set[str]) -> tuple[list[str], int]:
    """Split packed ids (``"D8:6; D9:17"``), keep well-formed ids that exist; count the rest.

    >>> parse_evidence(["D8:6; D9:17", "D", "D:11:26", "D1:3", "D99:1"], {"D8:6", "D9:17", "D1:3"})
    (['D8:6', 'D9:17', 'D1:3'], 3)
    """
    keep: list[str] = []
    dropped = 0
    for item in evidence:
        for part in re.split(r"[;\s]+", str(item).strip()):
            if not part:
                continue
            if _EVIDENCE.match(part) and part in known:
                if part not in keep:
                    keep.append(part)
            else:
                dropped += 1
    return keep, dropped


def locomo_corpora(data: str | Path, *, conversations: int | None = None) -> list[Corpus]:
    """One :class:`Corpus` per conversation of a LoCoMo-format JSON file."""
    samples = json.loads(Path(data).read_text("utf-8"))
    if isinstance(samples, dict):
        samples = [samples]
    samples = samples[:conversations] if conversations else samples
    out = []
    for sample in samples:
        sid = str(sample.get("sample_id", "locomo"))
        qa = list(sample.get("qa", []))

        def questions(ext_to_uid: dict[str, str], qa: list[dict[str, Any]] = qa
                      ) -> tuple[list[Question], dict[str, int]]:
            counts = {"questions": 0, "excluded_no_evidence": 0, "evidence_ids_dropped": 0}
            out_q = []
            for item in qa:
                counts["questions"] += 1
                ids, dropped = parse_evidence(item.get("evidence", []), set(ext_to_uid))
                counts["evidence_ids_dropped"] += dropped
                if not ids:
                    counts["excluded_no_evidence"] += 1
                    continue
                cat = int(item.get("category", 0))
                out_q.append(Question(str(item["question"]),
                                      frozenset(ext_to_uid[i] for i in ids),
                                      CATEGORIES.get(cat, str(cat))))
            return out_q, counts

        out.append(Corpus(sid, read_locomo(sample, source=sid), questions))
    return out


def run_locomo(data: str | Path, *, conversations: int | None = None,
               methods: Sequence[str] = RANK_METHODS, ablations: bool = True,
               progress: bool = True, embedder: Embedder | None = None,
               profile: str = "v2") -> dict[str, Any]:
    """Run the recall benchmark on a LoCoMo file with the settings of ``profile``."""
    result = run_recall(locomo_corpora(data, conversations=conversations),
                        settings=Settings.profile(profile, **BENCH_SETTINGS), methods=methods,
                        ablations=ablations, progress=progress, embedder=embedder,
                        label="locomo")
    return {"benchmark": "locomo", "data": str(data), **result,
            "index_settings": BENCH_SETTINGS}


def write_reports(result: dict[str, Any], out: str | Path, *, command: str = "") -> list[Path]:
    """Write ``out`` (JSON), ``out.md`` (tables) and ``out.png`` (R@10 by category)."""
    from .report import write_reports as write
    return write(result, out, command=command)
