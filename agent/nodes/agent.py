"""Call the chat model with instructions, summaries, documents and the recent messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.runtime import Runtime

from agent import prompts, windows
from agent.capabilities import mark_no_tools, refuses_tools
from agent.citations import format_passages
from agent.incoming import TextStream, clean_message
from agent.llm import model_label
from agent.memory import conversation_language, format_summaries
from agent.model_errors import ModelContextExceeded
from agent.openai_stream import StreamTimeouts, astream_message
from agent.progress import emit, emit_reasoning, emit_step, emit_text
from agent.reasoning import ThinkSplitter
from agent.state import AgentContext, AgentState, add_usage
from agent.tokens import (
    estimate_message_tokens,
    estimate_raw_tokens,
    estimate_tokens,
    message_text,
    update_calibration,
)
from agent.tool_echo import ToolEchoFilter, failures_of_turn
from agent.tools import tool_schemas_json, tools_for


def format_documents(documents: Sequence[dict[str, Any]], language: str) -> str:
    """Return the retrieved-context block of the system prompt ("" when empty): the cited
    passages, each under its document's number (agent/citations.py)."""
    if not documents:
        return ""
    return "\n\n".join([prompts.DOCUMENTS_INTRO[language], *format_passages(documents)])


def format_memories(memories: Sequence[dict[str, Any]], language: str) -> str:
    """Return the memories block of the system prompt ("" when none)."""
    if not memories:
        return ""
    lines = [f"- {m.get('text', '')}" for m in memories]
    return "\n".join([prompts.MEMORIES_INTRO[language], *lines])


def format_recalled(recalled: Sequence[dict[str, Any]], language: str) -> str:
    """Return the recalled-messages block ("" when none), each message verbatim."""
    if not recalled:
        return ""
    roles = prompts.RECALLED_ROLE[language]
    lines = [
        f"({roles.get(m.get('role', ''), m.get('role', ''))}) {m.get('content', '')}"
        for m in recalled
    ]
    return "\n\n".join([prompts.RECALLED_INTRO[language], *lines])


def system_prompt(
    summaries: Sequence[str],
    documents: Sequence[dict[str, Any]],
    language: str,
    final: bool,
    instructions: str = "",
    *,
    memory_on: bool = False,
    memories: Sequence[dict[str, Any]] = (),
    recalled: Sequence[dict[str, Any]] = (),
) -> str:
    """Assemble our instructions, the user's, memories, numbered summaries, recalled
    messages and retrieved context."""
    blocks = [prompts.AGENT_INSTRUCTIONS]
    if memory_on:
        blocks.append(prompts.MEMORY_NOTE)
    if instructions:
        blocks.append(prompts.USER_INSTRUCTIONS.format(instructions=instructions))
    blocks.append(format_memories(memories, language))
    blocks.append(format_summaries(summaries, language))
    blocks.append(format_recalled(recalled, language))
    blocks.append(format_documents(documents, language))
    if final:
        blocks.append(prompts.FINAL_ANSWER_NOTE)
    return "\n\n".join(block for block in blocks if block)


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Give every tool call a result and drop orphan results (the API rejects both)."""
    repaired: list[BaseMessage] = []
    pending: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ToolMessage):
            if pending.pop(message.tool_call_id, None) is not None:
                repaired.append(message)
            continue
        repaired += _interrupted_results(pending)
        pending = {}
        repaired.append(message)
        if isinstance(message, AIMessage):
            pending = {call["id"]: call["name"] for call in message.tool_calls if call["id"]}
    return repaired + _interrupted_results(pending)


def _interrupted_results(pending: dict[str, str]) -> list[BaseMessage]:
    """Return placeholder results for tool calls that never finished."""
    return [
        ToolMessage(prompts.INTERRUPTED_TOOL_RESULT, tool_call_id=i, name=n, status="error")
        for i, n in pending.items()
    ]


def tool_schema_tokens(tools: Sequence[BaseTool]) -> int:
    """Estimate what the tool definitions add to the prompt."""
    return int(estimate_raw_tokens(tool_schemas_json(tools))) if tools else 0


def build_ledger(
    state: AgentState, context: AgentContext, history: Sequence[BaseMessage], estimate: int
) -> dict[str, Any]:
    """Record what this model call is given (stored on the reply as its context)."""
    summaries = state.get("summaries", [])
    return {
        "model": model_label(context.config),
        "instructions_tokens": estimate_tokens(context.instructions),
        "summaries": [{"index": i, "text": s} for i, s in enumerate(summaries, 1)],
        # The conversation's own messages (rows a person can open), not this turn's tool
        # exchange, which the reply shows as its steps.
        "message_ids": [m.id for m in history if m.id and _is_row(m)],
        "estimated_input_tokens": estimate,
        "actual_input_tokens": None,
        "window": context.config.context_window,
        "calibration": state.get("calibration", 1.0),
        "route": state.get("route", "agent"),
        "documents": [d.get("document_id") for d in state.get("documents", [])],
        "memories": [{"id": m.get("id"), "text": m.get("text")} for m in state.get("memories", [])],
        "recalled_message_ids": [m.get("id") for m in state.get("recalled", [])],
    }


def _is_row(message: BaseMessage) -> bool:
    """Say whether a message of the history is one of the conversation's stored messages."""
    if isinstance(message, HumanMessage):
        return True
    return isinstance(message, AIMessage) and not message.tool_calls


def finish_message(response: AIMessage, reply_id: str) -> AIMessage:
    """Return the final answer under the caller's reply id, without tool calls."""
    kwargs = {k: v for k, v in response.additional_kwargs.items() if k != "tool_calls"}
    return response.model_copy(
        update={
            "id": reply_id,
            "tool_calls": [],
            "invalid_tool_calls": [],
            "additional_kwargs": kwargs,
        }
    )


async def stream_model(
    llm: BaseChatModel,
    prompt: list[BaseMessage],
    tools: Sequence[BaseTool],
    emit: Callable[[str], None] = emit_text,
    *,
    timeouts: StreamTimeouts | None = None,
) -> AIMessage:
    """Call the model streaming, emit its text as it arrives, and return the whole message.

    What the model sends enters here, and is cleaned here (agent/incoming.py): the text as
    it streams, the message (tool calls included) once it is whole. Its reasoning, in
    whichever form the server sends it (agent/reasoning.py), goes to `emit_reasoning`,
    never into the message: it is not the reply's words, and is never sent back.
    A `ChatOpenAI` is read without per-token LangChain objects (agent/openai_stream.py);
    any other chat model (the offline one, a test's) through its own `astream`.
    """
    text_stream, reasoning_stream = TextStream(emit), TextStream(emit_reasoning)
    splitter = ThinkSplitter(text_stream, reasoning_stream)
    try:
        message = await _stream_raw(llm, prompt, tools, splitter, reasoning_stream, timeouts)
    finally:
        splitter.close()
        text_stream.close()
        reasoning_stream.close()
    if splitter.found:  # the text after the <think> block is the answer
        message = message.model_copy(update={"content": "".join(splitter.answer)})
    return clean_message(message)


async def _stream_raw(
    llm: BaseChatModel,
    prompt: list[BaseMessage],
    tools: Sequence[BaseTool],
    on_text: Callable[[str], None],
    on_reasoning: Callable[[str], None],
    timeouts: StreamTimeouts | None,
) -> AIMessage:
    if isinstance(llm, ChatOpenAI):
        return await astream_message(
            llm, prompt, tools=tools, on_text=on_text, on_reasoning=on_reasoning, timeouts=timeouts
        )
    model: Runnable[Any, BaseMessage] = llm.bind_tools(tools) if tools else llm
    merged: AIMessageChunk | None = None
    async for chunk in model.astream(prompt):
        if not isinstance(chunk, AIMessageChunk):
            continue
        text = message_text(chunk)
        if text:
            on_text(text)
        merged = chunk if merged is None else merged + chunk
    if merged is None:
        return AIMessage(content="")
    message = message_chunk_to_message(merged)
    assert isinstance(message, AIMessage)
    return message


async def stream_without_refused_tools(
    context: AgentContext,
    prompt: list[BaseMessage],
    tools: Sequence[BaseTool],
    emit: Callable[[str], None] = emit_text,
) -> AIMessage:
    """Call the model; if its server refuses the request because of the tools, answer
    without them, and remember not to send them to that model again."""
    timeouts = StreamTimeouts(context.config.first_byte_timeout, context.config.idle_timeout)
    try:
        return await stream_model(context.llm, prompt, tools, emit, timeouts=timeouts)
    except Exception as exc:
        if not tools or not refuses_tools(exc):
            raise
        refused = exc
    try:
        response = await stream_model(context.llm, prompt, [], emit, timeouts=timeouts)
    except Exception:
        raise refused from None  # not the tools: the first error is the one to report
    mark_no_tools(context.config)
    emit_step("generate.no_tools")
    return response


def fit_to_window(prompt: list[BaseMessage], budget: int) -> list[BaseMessage]:
    """Return `prompt` within `budget` tokens: the oldest messages of the history go first
    (the instructions and the turn's own question and tool exchange stay; a tool call and
    its results go together); instructions still too long are cut at their end (the
    retrieved passages come last)."""
    system, rest = prompt[0], list(prompt[1:])
    last_question = max((i for i, m in enumerate(rest) if isinstance(m, HumanMessage)), default=0)
    history, turn = rest[:last_question], rest[last_question:]
    while history and estimate_message_tokens([system, *history, *turn]) > budget:
        history = history[1:]
        while history and isinstance(history[0], ToolMessage | AIMessage):
            history = history[1:]  # never a result without its call, nor a reply first
    fitted = [system, *repair_tool_pairs([*history, *turn])]
    over = estimate_message_tokens(fitted) - budget
    if over > 0 and isinstance(system.content, str):
        keep = max(200, len(system.content) - over * 4)
        fitted[0] = SystemMessage(system.content[:keep])
    return fitted


def window_of(context: AgentContext) -> int:
    """Return the model's window as known now: this turn's, or smaller if a refusal earlier
    in the turn (the summarizer's) told it."""
    config = context.config
    learned = windows.learned(config.openai_base_url, config.model)
    return min(config.context_window, learned) if learned else config.context_window


def window_budget(window: int | None, estimate: int) -> int:
    """Return the prompt's budget for a window (room left for the answer); without a
    window told, half of what was refused."""
    if window is None:
        return max(256, estimate // 2)
    return max(256, int(window * 0.8) - min(512, window // 4))


async def stream_within_window(
    context: AgentContext,
    prompt: list[BaseMessage],
    tools: Sequence[BaseTool],
    emit: Callable[[str], None],
    estimate: int,
) -> AIMessage:
    """Call the model; if its server refuses the prompt as too long, learn the window it
    told, shorten the prompt to fit and send it again, once (then ModelContextExceeded)."""
    try:
        return await stream_without_refused_tools(context, prompt, tools, emit)
    except ModelContextExceeded as refused:
        if refused.window:
            windows.remember(context.config.openai_base_url, context.config.model, refused.window)
        budget = window_budget(refused.window, estimate)
        if refused.requested and estimate:  # its tokens, not our estimate of them
            budget = int(budget * estimate / max(refused.requested, estimate))
        fitted = fit_to_window(prompt, budget)
        emit_step("model.window")
        return await stream_without_refused_tools(context, fitted, tools, emit)


def with_images(history: list[BaseMessage], images: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """Give the newest user message its images as image parts (a vision model), or a note
    that it cannot see them — in this call's request only; memory keeps the text."""
    if not images:
        return history
    index = max((i for i, m in enumerate(history) if isinstance(m, HumanMessage)), default=None)
    if index is None:
        return history
    blocks: list[str | dict[str, Any]] = [{"type": "text", "text": message_text(history[index])}]
    unseen = [name for name, url in images if not url]
    blocks += [{"type": "image_url", "image_url": {"url": url}} for _, url in images if url]
    if unseen:
        note = prompts.UNSEEN_IMAGES.format(names=", ".join(unseen))
        blocks.append({"type": "text", "text": note})
    changed = history[index].model_copy(update={"content": blocks})
    return [*history[:index], changed, *history[index + 1 :]]


async def agent(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Answer, or ask for tools; past the round cap answer without tools."""
    context = runtime.context
    messages = state.get("messages", [])
    summaries = state.get("summaries", [])
    iterations = state.get("iterations", 0)
    final = iterations >= context.config.max_iterations
    language = conversation_language(messages, summaries)
    history = repair_tool_pairs(messages)
    instructions = system_prompt(
        summaries,
        state.get("documents", []),
        language,
        final,
        context.instructions,
        memory_on=context.memory is not None,
        memories=state.get("memories", []),
        recalled=state.get("recalled", []),
    )
    prompt: list[BaseMessage] = [SystemMessage(instructions)]
    prompt += with_images(history, context.images)
    if context.continues is not None:
        prompt.append(HumanMessage(prompts.CONTINUE_NOTE))  # in this call only, never stored
    tools = [] if final or context.continues is not None else tools_for(context)
    calibration = state.get("calibration", 1.0)
    schemas = tool_schema_tokens(tools)
    raw = estimate_message_tokens(prompt) + schemas
    budget = window_budget(window_of(context), round(raw * calibration))
    if raw * calibration > budget:  # never past the window (Ollama cuts without a word)
        prompt = fit_to_window(prompt, max(256, int(budget / calibration) - schemas))
        history = [m for m in prompt[1:] if not isinstance(m, SystemMessage)]
        raw = estimate_message_tokens(prompt) + schemas
        emit_step("model.window")
    ledger = build_ledger(state, context, history, round(raw * calibration))
    emit({"kind": "ledger", "ledger": ledger})
    if final:
        emit_step("generate.final", round=iterations + 1)
    else:
        emit_step("generate.answer" if iterations == 0 else "generate.again", round=iterations + 1)
    # A failed tool's words were written for the model: people never read a repeat of them.
    failures = failures_of_turn(messages)
    echo = ToolEchoFilter(failures, language, emit_text) if failures else None
    response = await stream_within_window(context, prompt, tools, echo or emit_text, raw)
    if echo is not None:
        echo.close()
        response = echo.applied_to(response)
    actual = (response.usage_metadata or {}).get("input_tokens") or None
    emit({"kind": "ledger", "ledger": {**ledger, "actual_input_tokens": actual}})
    update: dict[str, Any] = {
        "usage": add_usage(state.get("usage"), response),
        "calibration": update_calibration(calibration, raw, actual),
    }
    if response.tool_calls and not final:
        return {**update, "messages": [response], "iterations": iterations + 1}
    reply = finish_message(response, context.reply_id)
    if context.continues is not None:
        # The new version holds the whole text and takes the cut-off one's place.
        cut_id, cut_text = context.continues
        reply = reply.model_copy(update={"content": cut_text + message_text(reply)})
        removal = [RemoveMessage(id=cut_id)] if any(m.id == cut_id for m in messages) else []
        return {**update, "messages": [*removal, reply]}
    return {**update, "messages": [reply]}
