"""Memory methods for store health: doctor and repair (reliability). Mixed into
:class:`~akasha_explorer.memory.Memory`; the checks live in :mod:`.doctor`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..memory import Memory
    from .doctor import DoctorReport

__all__ = ["StoreMixin"]


class StoreMixin:
    """Doctor / repair part of the Memory facade."""

    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check that the stores agree (see :mod:`akasha_explorer.store.doctor` for every
        check) and return a :class:`~akasha_explorer.store.doctor.DoctorReport`.

        With ``repair=True`` (writable stores only) fix what a crash can leave — messages of
        an interrupted ingest, a torn or already-folded journal, stale temporary files,
        nodes whose data LanceDB lost, an interrupted extraction — then check again:
        ``report.repairs`` says what was done, ``report.remaining`` what is left.
        A writable store is checkpointed first.
        """
        from . import doctor as dr

        mem: Memory = self  # type: ignore[assignment]
        mem._check_open()
        report = dr.check(mem)
        if repair:
            mem._check_write()
            dr.repair(mem, report)
        return report
