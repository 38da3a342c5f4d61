"""Notebook panels (SPEC §8): the offline graph view and the panels built on it.

Panels render state the engine produced and hold no memory logic; the only writes are the
explicit Memory API calls behind a button (e.g. RecallStepper's Commit → ``mem.commit``).

>>> from akasha_explorer import widgets
>>> sorted(widgets.__all__) == widgets.__all__
True
"""

from ._html import table
from .canvas import GraphCanvas
from .communities import CommunitiesPanel
from .compare import CompareMethods
from .curator import AnchorCurator
from .explorer import MemoryExplorer
from .labelbar import LabelBar
from .memorymap import MemoryMap
from .notebook import notebook_store
from .review import ReviewQueue
from .stepper import RecallStepper
from .timetravel import TimeTravelPanel
from .whatif import WhatIfPanel

__all__ = [
    "AnchorCurator",
    "CommunitiesPanel",
    "CompareMethods",
    "GraphCanvas",
    "LabelBar",
    "MemoryExplorer",
    "MemoryMap",
    "RecallStepper",
    "ReviewQueue",
    "TimeTravelPanel",
    "WhatIfPanel",
    "notebook_store",
    "table",
]
