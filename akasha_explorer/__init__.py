"""akasha_explorer: a Jupyter-first explorer and engine for long-term agent memory."""
