"""What a model server's refusal means, read from its status and body, in each dialect.

One place reads errors: whether a refusal is about the prompt's length (and the window the
server told), about one parameter the model does not take, or about tools; and which of
SPEC's failure codes a failed reply carries. The server's own words go to the log only.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import openai

FailureCode = Literal[
    "model_auth",
    "model_not_found",
    "model_rate_limited",
    "model_context",
    "model_unavailable",
    "model_rejected",
]
# The step (agent/steps.py) that says each failure in the person's language.
FAILURE_STEPS: dict[FailureCode, str] = {
    "model_auth": "model.auth",
    "model_not_found": "model.not_found",
    "model_rate_limited": "model.rate_limited",
    "model_context": "model.context",
    "model_unavailable": "model.unavailable",
    "model_rejected": "model.rejected",
}
# Parameters a request cannot do without: a 400 naming them is never "drop it and retry".
ESSENTIAL = frozenset({"messages", "model", "input_tokens", "input_text", "prompt"})
REFUSED_PARAMETER_CODES = frozenset({"unsupported_value", "unsupported_parameter"})

# "maximum context length is 2048 tokens" (OpenAI, llama-cpp-python, vLLM); "context length
# is only 2048 tokens" (newer vLLM); "available context size (2048 tokens)" (llama.cpp).
_WINDOW = re.compile(
    r"(?:maximum context length is|context length is only|available context size \()\s*(\d+)",
    re.IGNORECASE,
)
# "you requested 5273 tokens", "request (5273 tokens)", "your request has 5273 input tokens",
# "your messages resulted in 5273 tokens", "You passed 5273 input tokens".
_REQUESTED = re.compile(
    r"(?:you requested|request \(|request has|resulted in|you passed)\s*(\d+)", re.IGNORECASE
)
_TOO_LONG = re.compile(
    r"context length|context size|context window|too many tokens|prompt is too long", re.I
)
_TOOLS = re.compile(r"\btools?\b|tool[_ ]choice|function[_ ]call|\bfunctions?\b", re.IGNORECASE)


class ModelContextExceeded(RuntimeError):
    """The server refused the prompt as longer than its window (`window`: the size it
    told, and `requested`: the prompt's size as it counted it, when it told them)."""

    def __init__(self, window: int | None, requested: int | None = None) -> None:
        super().__init__(f"the prompt is longer than the model's window ({window or '?'} tokens)")
        self.window = window
        self.requested = requested


def error_body(error: BaseException) -> dict[str, Any]:
    """Return the `error` object of a refusal's body ({} when there is none)."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return body if isinstance(body, dict) else {}


def _message(error: BaseException) -> str:
    message = error_body(error).get("message")
    return message if isinstance(message, str) else str(error)


def context_refusal(error: BaseException) -> ModelContextExceeded | None:
    """Return the refusal as ModelContextExceeded when it is about the prompt's length."""
    if not isinstance(error, openai.BadRequestError | openai.APIStatusError):
        return None
    if getattr(error, "status_code", None) not in (400, 413, 422):
        return None
    body = error_body(error)
    message = _message(error)
    asked = _REQUESTED.search(message)
    requested = int(asked.group(1)) if asked else None
    if body.get("type") == "exceed_context_size_error":  # llama.cpp tells both as numbers
        n_ctx, n_prompt = body.get("n_ctx"), body.get("n_prompt_tokens")
        return ModelContextExceeded(
            int(n_ctx) if isinstance(n_ctx, int) else None,
            int(n_prompt) if isinstance(n_prompt, int) else requested,
        )
    if body.get("code") == "context_length_exceeded" or _TOO_LONG.search(message):
        found = _WINDOW.search(message)
        return ModelContextExceeded(int(found.group(1)) if found else None, requested)
    return None


def refused_parameter(error: BaseException) -> str | None:
    """Return the request parameter a 400 says the model does not take (OpenAI's
    `unsupported_value` / `unsupported_parameter`), if it is one a request can go without."""
    if not isinstance(error, openai.BadRequestError):
        return None
    body = error_body(error)
    param = body.get("param")
    if body.get("code") not in REFUSED_PARAMETER_CODES or not isinstance(param, str):
        return None
    return None if param in ESSENTIAL else param


def about_tools(error: BaseException) -> bool:
    """Say whether a refusal is about the request's tools (vLLM without a tool parser,
    Ollama for a model without tool support, a proxy checking the body)."""
    if not isinstance(
        error, openai.BadRequestError | openai.UnprocessableEntityError | openai.NotFoundError
    ):
        return False
    param = error_body(error).get("param")
    if isinstance(param, str) and param in ("tools", "tool_choice", "functions"):
        return True
    return bool(_TOOLS.search(_message(error)))


def failure_code(error: BaseException | None) -> FailureCode:
    """Return the failure code (SPEC "Failures named") of what ended a reply."""
    if isinstance(error, ModelContextExceeded) or (
        error is not None and context_refusal(error) is not None
    ):
        return "model_context"
    if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
        return "model_auth"
    if isinstance(error, openai.NotFoundError):
        return "model_not_found"
    if isinstance(error, openai.RateLimitError):
        return "model_rate_limited"
    if isinstance(error, openai.APIStatusError) and 400 <= error.status_code < 500:
        return "model_rejected"
    return "model_unavailable"  # refused connections, 5xx, silence, a cut stream
