"""Realtime transport: the process-wide hub, coalesced streams, progress, rate limits."""
