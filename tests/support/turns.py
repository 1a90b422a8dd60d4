"""Run a reply through the orchestrator, as a socket's `message.send` does, and watch it."""

from __future__ import annotations

from typing import Any

from conversations.realtime.hub import get_hub
from conversations.replies import Ask, start_reply
from tests.agent.helpers import memory_responder
from tests.support.openai_replies import Reply, ToolCall, forced_tool
from tests.support.sink import Sink


def calling(name: str, arguments: dict[str, Any], *, said: str = "The tool said: "):
    """A model that calls tool `name` once for the user's message, then answers with
    `said` and the tool's result (other requests, summaries included, as usual)."""

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and forced_tool(body) is None:
            return Reply(tool_calls=[ToolCall(name, arguments)])
        if last["role"] == "tool":
            return Reply(text=f"{said}{str(last['content'])[:300]}")
        return memory_responder(body)

    return respond


def ask_of(
    kind: str = "send", *, content: str = "", message_id: Any = None, model: Any = None, **fields
) -> Ask:
    """Build the typed ask `start_reply` takes from a test's keywords."""
    if kind == "send":
        return Ask.send(content, **fields)
    if kind == "edit":
        return Ask.edit(message_id, content, **fields)
    if kind == "regenerate":
        return Ask.regenerate(message_id, model=model)
    return Ask.continue_from(message_id)


def told(model: Any) -> str:
    """Return what the one tool call of the model's last request answered."""
    [result] = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    return result


async def ask(user: Any, conversation: Any, **ask: Any) -> tuple[Any, list[dict]]:
    """Start a reply (send by default) and return the stored reply and its frames."""
    hub, sink = get_hub(), Sink()
    await hub.join(conversation.id, sink)
    started = await start_reply(user=user, ask=ask_of(**ask), conversation_id=conversation.id)
    reply = await started.assistant_message()
    await hub.flushed(conversation.id)
    await hub.leave(conversation.id, sink)
    return reply, sink.frames
