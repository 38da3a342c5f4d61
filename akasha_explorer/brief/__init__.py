"""Agent-facing recall output: context blocks with handles, verbatim expand, recall health."""
