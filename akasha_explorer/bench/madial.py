"""MADial-Bench-zh memory recall (Chinese): the corpus for :mod:`.recall`.

MADial-Bench (NAACL 2025) gives each user a set of memories (``{time, scene, emotion,
event, user-id, id}``) and dialogues in which, at line ``test-turn``, the assistant should
recall the memories ``relevant-id``. Here each user is one store; each memory is one user
message (its ``event`` text, verbatim) in a session of its own dated by the memory's
``time`` (noon UTC), ingested in time order **with replay**. The query is the dialogue
before the test turn (lines ``1 .. t-1``, as the benchmark's own scorer uses it; the first
line is a ``<BOD>`` marker and is left out); the gold is the relevant memories of that user.

Files (JSON lines): ``MADial-Bench-zh-memory.json`` and ``MADial-Bench-zh-dialogue.json``
in the folder given by ``--data``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..config import Settings
from ..embed import Embedder
from ..errors import InvalidInput
from ..ingest.importers import Imported
from ..model import RawMessage
from .recall import Corpus, Question, run_recall

__all__ = ["MADIAL_METHODS", "madial_corpora", "madial_query", "run_madial"]

MADIAL_METHODS = ("context", "akasha", "akasha-activation", "dense", "bm25", "rrf")
MEMORY_FILE = "MADial-Bench-zh-memory.json"
DIALOGUE_FILE = "MADial-Bench-zh-dialogue.json"


def _json_lines(path: Path) -> list[Any]:
    if not path.is_file():
        raise InvalidInput(f"{path} is missing; --data must be the MADial-Bench-zh folder "
                           f"holding {MEMORY_FILE} and {DIALOGUE_FILE}")
    out = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise InvalidInput(f"{path}:{n}: not JSON ({e})") from None
    return out


def madial_query(dialogue: dict[str, Any]) -> str:
    """The query of one dialogue: its lines before the test turn, without ``<BOD>``.

    >>> madial_query({"dialogue": ["<BOD>\\n", "<A>:\\"hi\\"\\n", "<B>:\\"yo\\"\\n"],
    ...               "test-turn": [2]})
    '<A>:"hi"\\n'
    """
    t = int(dialogue["test-turn"][0])
    return "".join(dialogue["dialogue"][1:t])


def _date(value: str, where: str) -> float:
    try:
        day = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{where}: time {value!r} is not an ISO date") from None
    return day.replace(tzinfo=dt.UTC).timestamp() + 12 * 3600.0


def madial_corpora(folder: str | Path) -> list[Corpus]:
    """One :class:`Corpus` per user of a MADial-Bench-zh folder."""
    folder = Path(folder)
    memories = [next(iter(r.values())) for r in _json_lines(folder / MEMORY_FILE)]
    dialogues = _json_lines(folder / DIALOGUE_FILE)
    out = []
    for user in sorted({int(m["user-id"]) for m in memories}):
        mine = sorted((m for m in memories if int(m["user-id"]) == user),
                      key=lambda m: (str(m["time"]), int(m["id"])))
        msgs = [RawMessage(f"memory-{m['id']}", 0, _date(m["time"], f"memory {m['id']}"),
                           "user", str(m["event"]), ext_id=str(m["id"]), source="madial")
                for m in mine]
        dl = [d for d in dialogues if int(d["user-id"]) == user]

        def questions(ext_to_uid: dict[str, str], dl: list[dict[str, Any]] = dl
                      ) -> tuple[list[Question], dict[str, int]]:
            counts = {"dialogues": 0, "excluded_no_memory": 0, "relevant_ids_dropped": 0}
            qs = []
            for d in dl:
                counts["dialogues"] += 1
                ids = [str(i) for i in d.get("relevant-id", [])]
                gold = frozenset(ext_to_uid[i] for i in ids if i in ext_to_uid)
                counts["relevant_ids_dropped"] += sum(1 for i in ids if i not in ext_to_uid)
                if not gold:
                    counts["excluded_no_memory"] += 1
                    continue
                qs.append(Question(madial_query(d), gold, "dialogue"))
            return qs, counts

        out.append(Corpus(f"user-{user}", Imported(f"madial-user-{user}", "madial", msgs),
                          questions))
    return out


def run_madial(data: str | Path, *, methods: Sequence[str] = MADIAL_METHODS,
               ablations: bool = True, progress: bool = True,
               embedder: Embedder | None = None, profile: str = "v2") -> dict[str, Any]:
    """Run the recall benchmark on MADial-Bench-zh with the settings of ``profile``."""
    result = run_recall(madial_corpora(data), settings=Settings.profile(profile),
                        methods=methods, ablations=ablations, progress=progress,
                        embedder=embedder, label="madial")
    return {"benchmark": "madial", "data": str(data), **result}
