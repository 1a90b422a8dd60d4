"""What the fake OpenAI server answers, and how a test reads what it was asked.

A `Reply` (text, `ToolCall`s, and how to misbehave) is scripted with
`FakeOpenAI.enqueue` or returned by a responder; `default_responder` answers
structured-output requests validly and echoes the rest, `default_title_responder`
titles conversations. `message_texts`, `forced_tool` and `count_tokens` read a recorded
request body the way responders and tests need.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent import prompts

# Punctuation runs merge the way BPE merges `{"`, `":` and `},`.
_TOKEN = re.compile(r"[\uac00-\ud7a3]|[A-Za-z]+|\d{1,3}|[^\s\w]{1,3}")


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """One scripted answer of the fake server."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200  # anything else answers an OpenAI-style error with this status
    error_message: str = "The server had an error while processing your request."
    fail_after_chunks: int | None = None  # drop the connection after this many text chunks
    chars_per_second: float | None = None  # pace the stream
    chunk_chars: int = 4
    finish_reason: str | None = None  # default: "tool_calls" or "stop"
    prompt_tokens: int | None = None  # default: counted from the request
    delay: float = 0.0  # seconds before answering
    stream_error: str | None = None  # after the text: an `{"error": …}` event, as proxies send
    send_usage: bool = True  # False: no usage in the stream, as llama.cpp's server
    hang: bool = False  # accept the request, then send nothing until the client leaves
    stall_after_chunks: int | None = None  # fall silent after this many text chunks
    finish: bool = True  # False: no `finish_reason` before the end (a cut llama.cpp stream)
    done: bool = True  # False: end the body without `data: [DONE]`
    malformed: str | None = None  # after the text: this `data:` line, which is not JSON
    reasoning: str = ""  # the model's reasoning, before the text, as the server's dialect sends it
    error_body: dict[str, Any] | None = None  # with `status`: this body, as it is
    headers: dict[str, str] = field(default_factory=dict)  # with `status`: e.g. Retry-After


Responder = Callable[[dict[str, Any]], "Reply | str"]


def count_tokens(text: str) -> int:
    """Count tokens roughly the way a BPE tokenizer would (per word, syllable, mark run)."""
    return len(_TOKEN.findall(text))


def message_texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    """Return the text of each message in a request body (optionally of one role)."""
    texts = []
    for message in body.get("messages", []):
        if role is not None and message.get("role") != role:
            continue
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append(content)
    return texts


def forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the tool definition the request forces (structured output), if any."""
    choice = body.get("tool_choice")
    tools = body.get("tools") or []
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        return next((t for t in tools if t["function"]["name"] == name), None)
    if choice in ("required", "any") and tools:
        return tools[0]
    return None


def schema_example(schema: dict[str, Any]) -> dict[str, Any]:
    """Return arguments that satisfy a simple JSON schema (last enum value, the field name)."""
    args: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if "enum" in prop:
            args[name] = prop["enum"][-1]
        elif prop.get("type") in ("integer", "number"):
            args[name] = 0
        elif prop.get("type") == "boolean":
            args[name] = False
        else:
            args[name] = name
    return args


def default_responder(body: dict[str, Any]) -> Reply:
    """Answer structured-output requests validly and everything else with an echo."""
    tool = forced_tool(body)
    if tool is not None:
        function = tool["function"]
        return Reply(
            tool_calls=[ToolCall(function["name"], schema_example(function["parameters"]))]
        )
    users = message_texts(body, "user")
    return Reply(text=f"Echo: {users[-1] if users else ''}")


def is_title_request(body: dict[str, Any]) -> bool:
    """Say whether a request asks for a conversation's title."""
    systems = message_texts(body, "system")
    return bool(systems) and systems[0].startswith(prompts.TITLE_MARKER)


def default_title_responder(body: dict[str, Any]) -> Reply:
    """Title a conversation with the first four words of its question."""
    request = message_texts(body, "user")[-1] if message_texts(body, "user") else ""
    question = request.removeprefix("User: ").split("\n\nAssistant:", 1)[0]
    return Reply(text=" ".join(question.split()[:4]) or "Untitled")
