"""vectors."""
