"""Django-free helpers for connection pools, below every app (the agent's checkpoint pool and
Django's both check connections with `pools.idle`)."""
