"""Graph schema versions and the statements that move a store from one to the next.

``SCHEMA_VERSION`` is what this code writes; ``MIGRATIONS[v]`` lists the Cypher statements
that turn a version-``v`` graph into version ``v + 1`` (applied in order on a read-write
open, each recorded in ``Meta.schema_version``). A store newer than the code is refused.
``schema.cypher`` is the current version (what a new store gets).
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 5

MIGRATIONS: dict[int, list[str]] = {
    # 2: Triple.slot — what a value is *of*, so a new value supersedes the old (SPEC §6)
    1: ["ALTER TABLE Triple ADD slot STRING DEFAULT ''"],
    # 3: Forgotten — uids of forgotten messages, so re-importing a source skips them (§6)
    2: ["CREATE NODE TABLE Forgotten(uid STRING PRIMARY KEY, ts DOUBLE)"],
    # 4: Label — labelled queries, the store's own recall test set (issue 16)
    3: ["CREATE NODE TABLE Label(uid STRING PRIMARY KEY, query STRING, node STRING, "
        "relevant BOOLEAN, ts DOUBLE, by STRING)"],
    # 5: CoactPruned — a turn's co-activations on the COACT edges pruned at checkpoints,
    #    and how many edges (they still count in its fan; SPEC §3, v2; issue 28)
    4: ["CREATE NODE TABLE CoactPruned(uid STRING PRIMARY KEY, co_count INT64, edges INT64)"],
}
