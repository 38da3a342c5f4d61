"""Notebook panels (SPEC §8): the offline graph view and the panels built on it.

Panels render state the engine produced and hold no memory logic; the only writes are the
explicit Memory API calls behind a button (e.g. RecallStepper's Commit → ``mem.commit``).

>>> from akasha_explorer import widgets
>>> sorted(widgets.__all__) == widgets.__all__
True
"""

from .canvas import GraphCanvas
from .communities import CommunitiesPanel
from .curator import AnchorCurator
from .explorer import MemoryExplorer
from .notebook import notebook_store
from .review import ReviewQueue
from .stepper import RecallStepper

__all__ = [
    "AnchorCurator",
    "CommunitiesPanel",
    "GraphCanvas",
    "MemoryExplorer",
    "RecallStepper",
    "ReviewQueue",
    "notebook_store",
]
