"""Graph nodes, one per module; each returns only the state keys it changes."""
