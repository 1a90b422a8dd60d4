"""The steps a turn shows the person while it works: every code, its kind and its words.

The one definition. Nodes report a step as a code and params
(`progress.emit_step("retrieve.found", count=3)`); the `thinking` event, the websocket
frame and the stored part carry `step` (its kind), `code`, `params` and `content` (the
English sentence, for clients that show text as it comes). Pages translate the code at
display time: `conversations.steps.step_text` (the `step_text` template filter) and
`stepText` in static/js/steps.js, whose catalog static/js/step_catalog.js is generated from
`STEPS` (`manage.py step_catalog`). Words are for people: no exception names, no tool ids.

A tool that fails for a reason the person should hear raises `ToolFailed` with a code of
kind "tool_result"; its message is what the model is told.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent.step_table import Step, _, mark, ngettext
from agent.tool_steps import MCP_TOOL, OTHER_TOOL, TOOL_STEPS, TOOL_WORDS

STEPS: dict[str, Step] = {
    # route: whether the question goes to the user's documents
    "route.documents": mark("route", _("Decided to search your documents")),
    "route.direct": mark("route", _("Decided to answer without searching your documents")),
    # retrieve
    "retrieve.found": mark(
        "retrieve",
        ngettext(
            "Searched your documents: %(count)s passage found",
            "Searched your documents: %(count)s passages found",
        ),
    ),
    "retrieve.nothing": mark("retrieve", _("Searched your documents: nothing relevant found")),
    "retrieve.failed": mark("retrieve", _("Could not search your documents this time")),
    # memory: the conversation so far, summaries, memories, older messages
    "memory.fresh": mark("memory", _("This is the start of the conversation")),
    "memory.in_view": mark(
        "memory",
        ngettext(
            "Looked at %(messages)s earlier message", "Looked at %(messages)s earlier messages"
        ),
        count="messages",
    ),
    "memory.in_view_with_summary": mark(
        "memory",
        ngettext(
            "Looked at %(messages)s earlier message and what was kept of older ones",
            "Looked at %(messages)s earlier messages and what was kept of older ones",
        ),
        count="messages",
    ),
    "memory.summarized": mark(
        "memory",
        ngettext(
            "Summarized %(summarized)s older message to keep the conversation in memory",
            "Summarized %(summarized)s older messages to keep the conversation in memory",
        ),
        count="summarized",
    ),
    # Replies stored before summaries fell back to the user's words still show this one.
    "memory.summary_failed": mark(
        "memory", _("Could not summarize older messages this time, so all of them were kept")
    ),
    "memory.kept_words_refused": mark(
        "memory",
        ngettext(
            "A summary of %(count)s older message left out details, so what you said in it was"
            " kept instead, shortened",
            "A summary of %(count)s older messages left out details, so what you said in them"
            " was kept instead, shortened",
        ),
    ),
    "memory.kept_words_failed": mark(
        "memory",
        ngettext(
            "Could not summarize %(count)s older message, so what you said in it was kept"
            " instead, shortened",
            "Could not summarize %(count)s older messages, so what you said in them was kept"
            " instead, shortened",
        ),
    ),
    "memory.kept_words_paused": mark(
        "memory",
        ngettext(
            "Kept what you said in %(count)s older message, shortened (summarizing is paused"
            " for a while after it failed)",
            "Kept what you said in %(count)s older messages, shortened (summarizing is paused"
            " for a while after it failed)",
        ),
    ),
    "memory.memories_used": mark(
        "memory", ngettext("Used %(count)s saved memory", "Used %(count)s saved memories")
    ),
    "memory.messages_recalled": mark(
        "memory",
        ngettext(
            "Looked back at %(count)s older message", "Looked back at %(count)s older messages"
        ),
    ),
    "memory.recall_failed": mark("memory", _("Could not look through your memories this time")),
    "memory.recall_messages_failed": mark(
        "memory", _("Could not look back through older messages this time")
    ),
    # generate
    "generate.answer": mark("generate", _("Writing the answer")),
    # while the model server works: reading a long prompt, or asking to wait (429)
    "model.waiting": mark(
        "generate",
        ngettext(
            "Waiting for the model… %(seconds)s second",
            "Waiting for the model… %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.busy": mark(
        "generate",
        ngettext(
            "The model server is busy; trying again in %(seconds)s second",
            "The model server is busy; trying again in %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.window": mark(
        "memory",
        _("The conversation was longer than this model can read, so it was shortened to fit"),
    ),
    "generate.again": mark("generate", _("Writing the answer with what the tools returned")),
    "generate.final": mark("generate", _("Writing the answer without using more tools")),
    "generate.no_tools": mark(
        "generate", _("This model cannot use tools, so it answered without them")
    ),
    "generate.partial_not_kept": mark(
        "generate", _("This cut-off reply could not be kept in the conversation's memory")
    ),
    # why a reply ended in an error (MODEL_FAULTS): what the model server did
    "model.failed": mark("generate", _("The model server failed, so the answer stops here")),
    "model.cut_off": mark(
        "generate", _("The model server ended the answer before it was finished")
    ),
    "model.timed_out": mark(
        "generate",
        ngettext(
            "The model server did not answer within %(seconds)s second",
            "The model server did not answer within %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.stalled": mark(
        "generate",
        ngettext(
            "The model server sent nothing for %(seconds)s second, so the answer stops here",
            "The model server sent nothing for %(seconds)s seconds, so the answer stops here",
        ),
        count="seconds",
    ),
    # …and the failures SPEC names (metadata.error's codes, agent/model_errors.py)
    "model.auth": mark(
        "generate", _("The model server refused the app's key, so there is no answer")
    ),
    "model.not_found": mark(
        "generate", _("The model server does not have this model, so there is no answer")
    ),
    "model.rate_limited": mark(
        "generate", _("The model server stayed busy, so there is no answer; try again soon")
    ),
    "model.context": mark(
        "generate", _("The conversation is too long for this model even when compressed")
    ),
    "model.unavailable": mark(
        "generate", _("The model server could not be reached, so there is no answer")
    ),
    "model.rejected": mark(
        "generate", _("The model server refused the request, so there is no answer")
    ),
    # …or the conversation's memory (its checkpoints, the database) failed, not the model
    "memory.unreachable": mark(
        "generate", _("The conversation's memory could not be reached, so the answer stops here")
    ),
    **TOOL_STEPS,
}

CODES = tuple(STEPS)
# The steps that say why a reply failed (its finish note shows the last one): the model
# server's, and the one that is not the model's.
MODEL_PROGRESS = ("model.waiting", "model.busy", "model.window")  # steps, not faults
# Steps that count up while they last: a reply keeps (and a page shows) only their latest.
COUNTING_STEPS = ("model.waiting", "model.busy")
MODEL_FAULTS = (
    *(code for code in STEPS if code.startswith("model.") and code not in MODEL_PROGRESS),
    "memory.unreachable",
)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


class ToolFailed(ValueError):
    """A tool could not do what was asked, for a reason the person should hear.

    `code` is a step of kind "tool_result" in STEPS; the message is what the model is told
    (it may be an instruction to the model: it never reaches the screen).
    """

    def __init__(self, code: str, message: str, **params: Any) -> None:
        if code not in STEPS or STEPS[code].kind != "tool_result":
            raise ValueError(f"not a tool failure step: {code!r}")
        super().__init__(message)
        self.code = code
        self.params = params


def tool_code(name: str, outcome: str, *, server: str | None = None) -> str:
    """Return the step code of a tool's call, result or failure ("call", "done", "failed");
    an MCP server's tool (`server`) has its own."""
    if server:
        return f"tool.{MCP_TOOL}.{outcome}"
    return f"tool.{name if name in TOOL_WORDS else OTHER_TOOL}.{outcome}"


def words(code: str, params: Mapping[str, Any]) -> str:
    """Return the English template of `code` for these params (singular or plural)."""
    step = STEPS[code]
    if step.plural and count_of(step, params) != 1:
        return step.plural
    return step.text


def count_of(step: Step, params: Mapping[str, Any]) -> int:
    """Return the number a plural step counts (0 when the param is missing or odd)."""
    try:
        return int(params.get(step.count, 0))
    except (TypeError, ValueError):
        return 0


def fill(template: str, params: Mapping[str, Any]) -> str:
    """Put the params into a template's `%(name)s` places (a missing one stays empty)."""
    return _PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), "")), template)


def describe(code: str, params: Mapping[str, Any]) -> str:
    """Return the English sentence of a step."""
    return fill(words(code, params), params)


def thinking_step(code: str, **params: Any) -> dict[str, Any]:
    """Return a step as a `thinking` event, which is also how a reply's parts keep it."""
    return {"type": "thinking", **step(code, **params)}


def step(code: str, **params: Any) -> dict[str, Any]:
    """Return a step's fields: {step, code, params, content} (raises KeyError on an unknown
    code, so a typo fails the first test that reaches it)."""
    return {
        "step": STEPS[code].kind,
        "code": code,
        "params": params,
        "content": describe(code, params),
    }
