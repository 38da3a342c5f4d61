"""graphdb."""
