"""What a model can do, learned as we go: a server that refuses tools is not sent them again.

Remembered per (server, model) for the life of the process: a restart tries once more,
which is also how a server that gained tool support is noticed.
"""

from __future__ import annotations

import openai

from agent.config import AgentConfig

_NO_TOOLS: set[tuple[str, str]] = set()
# What a server answers a request it cannot serve with tools (vLLM without a tool parser,
# Ollama for models without tool support, proxies that validate the body).
REFUSALS = (openai.BadRequestError, openai.UnprocessableEntityError, openai.NotFoundError)


def _key(config: AgentConfig) -> tuple[str, str]:
    return (config.openai_base_url or "", config.model)


def supports_tools(config: AgentConfig) -> bool:
    """Say whether tools may be sent to this model (not known to refuse them)."""
    return _key(config) not in _NO_TOOLS


def mark_no_tools(config: AgentConfig) -> None:
    """Remember that this model's server refuses requests with tools."""
    _NO_TOOLS.add(_key(config))


def forget_capabilities() -> None:
    """Forget what was learned (tests)."""
    _NO_TOOLS.clear()
