"""The pure Akasha engine (SPEC §3–5): numpy arrays in, numbers and traces out.

Imports nothing of ours but :mod:`akasha_explorer.config`, :mod:`akasha_explorer.errors`
and its own modules — no store, model, widget or torch (``tests/test_engine_trace.py``
checks). One recall::

    trace = recall(nodes, edges, q, lexical, now=now, settings=settings)   # stages 1-4
    plan = plan_writeback(trace, nodes, edges, current_row, now=now, settings=settings)
    apply_plan(plan, nodes, edges)                                          # stage 5

Modules: :mod:`.dynamics` (§3), :mod:`.bm25` (lexical side of stage 1), :mod:`.seeds`
(stage 1), :mod:`.ripple` (stage 2a RWR, 2b graph_expand), :mod:`.settle` (stages 3–4),
:mod:`.writeback` (stage 5), :mod:`.trace` (§5), :mod:`.recall` (the orchestrator and the
list of decisions taken where SPEC is silent), :mod:`.state` (the mirror), :mod:`.toy`
(hand-built mirrors).
"""

from .bm25 import LexicalHits
from .recall import plan_writeback, recall
from .state import EdgeStore, NodeTable
from .trace import RecallTrace
from .writeback import WritebackPlan, apply_plan, compute_plan

__all__ = [
    "EdgeStore",
    "LexicalHits",
    "NodeTable",
    "RecallTrace",
    "WritebackPlan",
    "apply_plan",
    "compute_plan",
    "plan_writeback",
    "recall",
]
