"""Test doubles for what lies outside the app (the LLM server)."""
