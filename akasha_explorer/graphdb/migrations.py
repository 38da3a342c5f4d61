"""Graph schema versions and the statements that move a store from one to the next.

``SCHEMA_VERSION`` is what this code writes; ``MIGRATIONS[v]`` lists the Cypher statements
that turn a version-``v`` graph into version ``v + 1`` (applied in order on a read-write
open, each recorded in ``Meta.schema_version``). A store newer than the code is refused.
Version 1 is ``schema.cypher``.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2

MIGRATIONS: dict[int, list[str]] = {
    # 2: Triple.slot — what a value is *of*, so a new value supersedes the old (SPEC §6)
    1: ["ALTER TABLE Triple ADD slot STRING DEFAULT ''"],
}
