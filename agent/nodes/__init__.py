"""Graph nodes and the parts of the prepare step, one per module; each returns only the state
keys it changes."""
