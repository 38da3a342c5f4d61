"""When a read-write :class:`~.kuzu_db.GraphDB` closes its database and opens it again to
give back Kuzu's memory (the policy; the reopen itself is ``GraphDB.reopen_if_due``).

kuzu 0.11.3 keeps C heap per transaction until the database is closed, and every page a
checkpoint touched in its buffer pool; every write here is checkpointed, so without a
reopen an agent's memory grew without end (the issue-28 soak).
"""

from __future__ import annotations

from .._proc import resident_bytes

__all__ = ["REOPEN_AFTER", "REOPEN_GROWTH", "ReopenPolicy"]

REOPEN_AFTER = 32
"""Checkpoints after which a read-write :class:`GraphDB` closes and opens its database
again, before its next write: kuzu 0.11.3 keeps C heap per transaction until the database
is closed — ~0.25 MB per ``CHECKPOINT`` (80 of them +24 MB, on the demo's graph and on a
10k-turn one alike), ~50 KB per committed write, more for large ``COPY``s; the close gives
it all back, the open takes ~45 ms at 10k turns. Every write here is checkpointed, so an
agent's memory grew by this without end (the issue-28 soak: ~13 MB a 1,000 commits, most
of it the ingests' transactions; at 128 the soak still grew ~100 MB between reopens)."""

REOPEN_GROWTH = 24 << 20
"""Resident bytes the process may gain between a database's first checkpoint and a later
one before it is reopened — at the next write, or when the store's checkpoint ends
(``GraphDB.reopen_if_due``) — whatever the count:
besides its C heap, Kuzu keeps every page a checkpoint touched in its buffer pool (80 % of
RAM by default, so nothing is evicted), and a checkpoint that rewrites COACT touches new
pages as the file grows — the issue-28 soak (10k turns, 10,000 recalls with an ingest
every 250) grew 60 MB between reopens at :data:`REOPEN_AFTER` alone, and a reopen gave 64
MB back. Counted from the first checkpoint, not the open, so a mirror loaded after the
open does not count; a process whose memory grows elsewhere reopens at most once per
this much growth (~45 ms each at 10k turns)."""


class ReopenPolicy:
    """Counts one database's checkpoints and the process's growth since the first.

    >>> p = ReopenPolicy(after=2, growth=1 << 40)
    >>> p.checkpointed(); p.due
    False
    >>> p.checkpointed(); p.due
    True
    >>> p.reset(); p.due
    False
    """

    def __init__(self, after: int = REOPEN_AFTER, growth: int = REOPEN_GROWTH) -> None:
        self.after = after
        """:data:`REOPEN_AFTER` for this database."""
        self.growth = growth
        """:data:`REOPEN_GROWTH` for this database."""
        self.reset()

    def reset(self) -> None:
        """The database was (re)opened: count from nothing."""
        self._checkpoints = 0
        self._rss_base: int | None = None   # resident bytes at its first checkpoint
        self._grown = False                  # growth passed since then

    def checkpointed(self) -> None:
        """One more ``CHECKPOINT`` ran."""
        self._checkpoints += 1
        rss = resident_bytes()
        if rss is None:
            return
        if self._rss_base is None:
            self._rss_base = rss
        elif rss - self._rss_base >= self.growth:
            self._grown = True

    @property
    def due(self) -> bool:
        """Whether the database should be reopened before its next write."""
        return self._checkpoints >= self.after or self._grown
