"""The conversation routers of the JSON API (assembled in chatsite/api.py)."""
