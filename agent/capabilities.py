"""What a model can do, learned as we go: a server that refuses tools is not sent them again,
nor a parameter it refused (a reasoning model's `temperature`).

Remembered per (server, model) for the life of the process: a restart tries once more,
which is also how a server that gained support is noticed.
"""

from __future__ import annotations

from typing import Any

from agent.config import AgentConfig
from agent.model_errors import about_tools

Server = tuple[str, str]  # (base URL, model)

_NO_TOOLS: set[Server] = set()
_REFUSED: dict[Server, set[str]] = {}


def _key(config: AgentConfig) -> Server:
    return (config.openai_base_url or "", config.model)


def server_of(llm: Any) -> Server:
    """Return the (base URL, model) a ChatOpenAI talks to."""
    return (str(llm.openai_api_base or ""), str(llm.model_name))


def supports_tools(config: AgentConfig) -> bool:
    """Say whether tools may be sent to this model (not known to refuse them)."""
    return _key(config) not in _NO_TOOLS


def refuses_tools(error: BaseException) -> bool:
    """Say whether a refusal means "this model takes no tools" (and not something else)."""
    return about_tools(error)


def mark_no_tools(config: AgentConfig) -> None:
    """Remember that this model's server refuses requests with tools."""
    _NO_TOOLS.add(_key(config))


def refused_parameters(server: Server) -> frozenset[str]:
    """Return the request parameters this model refused."""
    return frozenset(_REFUSED.get(server, ()))


def mark_refused(server: Server, parameter: str) -> None:
    """Remember that this model refuses `parameter`."""
    _REFUSED.setdefault(server, set()).add(parameter)


def forget_capabilities() -> None:
    """Forget what was learned (tests)."""
    _NO_TOOLS.clear()
    _REFUSED.clear()
