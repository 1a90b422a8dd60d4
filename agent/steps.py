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
from dataclasses import dataclass
from typing import Any

from agent.events import ThinkingStep


# Markers only: xgettext (`manage.py makemessages`) collects the arguments of these two names
# into the translation catalogs. The words are translated where they are shown, not here.
def _(text: str) -> str:
    """Mark `text` for the catalogs."""
    return text


def ngettext(singular: str, plural: str) -> tuple[str, str]:
    """Mark a count's two English forms for the catalogs (one plural entry); return both."""
    return singular, plural


@dataclass(frozen=True)
class Step:
    """One kind of step: where it belongs and its English words (`%(param)s` placeholders)."""

    kind: ThinkingStep
    text: str
    plural: str = ""  # the form for any count but one; `count` names the param counted
    count: str = "count"


def _step(kind: ThinkingStep, words: str | tuple[str, str], count: str = "count") -> Step:
    if isinstance(words, tuple):
        return Step(kind, words[0], words[1], count)
    return Step(kind, words)


# The built-in tools by the names the model calls them: (calling, done, failed).
TOOL_WORDS: dict[str, tuple[str, str, str]] = {
    "calculator": (
        _("Using the calculator"),
        _("Used the calculator"),
        _("The calculator could not work that out"),
    ),
    "get_current_datetime": (
        _("Checking the clock"),
        _("Checked the clock"),
        _("Could not read the clock"),
    ),
    "search_documents": (
        _("Searching your documents"),
        _("Searched your documents"),
        _("Could not search your documents"),
    ),
    "get_document_section": (
        _("Opening a section of your documents"),
        _("Read a section of your documents"),
        _("Could not open that section of your documents"),
    ),
    "search_conversations": (
        _("Searching your other conversations"),
        _("Searched your other conversations"),
        _("Could not search your other conversations"),
    ),
    "remember": (
        _("Saving a memory"),
        _("Saved a memory"),
        _("Could not save that as a memory"),
    ),
    "forget": (
        _("Deleting a memory"),
        _("Deleted a memory"),
        _("Could not delete that memory"),
    ),
    "web_search": (
        _("Searching the web"),
        _("Searched the web"),
        _("Could not search the web"),
    ),
    "read_url": (
        _("Opening a web page"),
        _("Opened a web page"),
        _("Could not open that web page"),
    ),
    "python": (
        _("Running Python code"),
        _("Ran Python code"),
        _("Could not run the Python code"),
    ),
}
# Any other tool (an MCP server's): its own name is all we know of it.
OTHER_TOOL = "other"
OTHER_TOOL_WORDS = (
    _("Using the tool %(tool)s"),
    _("Used the tool %(tool)s"),
    _("The tool %(tool)s did not work this time"),
)
# An MCP server's tool: its name and its server's (toolbox/).
MCP_TOOL = "mcp"
MCP_TOOL_WORDS = (
    _("Using %(tool)s on %(server)s"),
    _("Used %(tool)s on %(server)s"),
    _("%(tool)s on %(server)s did not work this time"),
)

STEPS: dict[str, Step] = {
    # route: whether the question goes to the user's documents
    "route.documents": _step("route", _("Decided to search your documents")),
    "route.direct": _step("route", _("Decided to answer without searching your documents")),
    # retrieve
    "retrieve.found": _step(
        "retrieve",
        ngettext(
            "Searched your documents: %(count)s passage found",
            "Searched your documents: %(count)s passages found",
        ),
    ),
    "retrieve.nothing": _step("retrieve", _("Searched your documents: nothing relevant found")),
    "retrieve.failed": _step("retrieve", _("Could not search your documents this time")),
    # memory: the conversation so far, summaries, memories, older messages
    "memory.fresh": _step("memory", _("This is the start of the conversation")),
    "memory.in_view": _step(
        "memory",
        ngettext(
            "Looked at %(messages)s earlier message", "Looked at %(messages)s earlier messages"
        ),
        count="messages",
    ),
    "memory.in_view_with_summary": _step(
        "memory",
        ngettext(
            "Looked at %(messages)s earlier message and what was kept of older ones",
            "Looked at %(messages)s earlier messages and what was kept of older ones",
        ),
        count="messages",
    ),
    "memory.summarized": _step(
        "memory",
        ngettext(
            "Summarized %(summarized)s older message to keep the conversation in memory",
            "Summarized %(summarized)s older messages to keep the conversation in memory",
        ),
        count="summarized",
    ),
    # Replies stored before summaries fell back to the user's words still show this one.
    "memory.summary_failed": _step(
        "memory", _("Could not summarize older messages this time, so all of them were kept")
    ),
    "memory.kept_words_refused": _step(
        "memory",
        ngettext(
            "A summary of %(count)s older message left out details, so what you said in it was"
            " kept instead, shortened",
            "A summary of %(count)s older messages left out details, so what you said in them"
            " was kept instead, shortened",
        ),
    ),
    "memory.kept_words_failed": _step(
        "memory",
        ngettext(
            "Could not summarize %(count)s older message, so what you said in it was kept"
            " instead, shortened",
            "Could not summarize %(count)s older messages, so what you said in them was kept"
            " instead, shortened",
        ),
    ),
    "memory.kept_words_paused": _step(
        "memory",
        ngettext(
            "Kept what you said in %(count)s older message, shortened (summarizing is paused"
            " for a while after it failed)",
            "Kept what you said in %(count)s older messages, shortened (summarizing is paused"
            " for a while after it failed)",
        ),
    ),
    "memory.memories_used": _step(
        "memory", ngettext("Used %(count)s saved memory", "Used %(count)s saved memories")
    ),
    "memory.messages_recalled": _step(
        "memory",
        ngettext(
            "Looked back at %(count)s older message", "Looked back at %(count)s older messages"
        ),
    ),
    "memory.recall_failed": _step("memory", _("Could not look through your memories this time")),
    "memory.recall_messages_failed": _step(
        "memory", _("Could not look back through older messages this time")
    ),
    # generate
    "generate.answer": _step("generate", _("Writing the answer")),
    # while the model server works: reading a long prompt, or asking to wait (429)
    "model.waiting": _step(
        "generate",
        ngettext(
            "Waiting for the model… %(seconds)s second",
            "Waiting for the model… %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.busy": _step(
        "generate",
        ngettext(
            "The model server is busy; trying again in %(seconds)s second",
            "The model server is busy; trying again in %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.window": _step(
        "memory",
        _("The conversation was longer than this model can read, so it was shortened to fit"),
    ),
    "generate.again": _step("generate", _("Writing the answer with what the tools returned")),
    "generate.final": _step("generate", _("Writing the answer without using more tools")),
    "generate.no_tools": _step(
        "generate", _("This model cannot use tools, so it answered without them")
    ),
    "generate.partial_not_kept": _step(
        "generate", _("This cut-off reply could not be kept in the conversation's memory")
    ),
    # why a reply ended in an error (MODEL_FAULTS): what the model server did
    "model.failed": _step("generate", _("The model server failed, so the answer stops here")),
    "model.cut_off": _step(
        "generate", _("The model server ended the answer before it was finished")
    ),
    "model.timed_out": _step(
        "generate",
        ngettext(
            "The model server did not answer within %(seconds)s second",
            "The model server did not answer within %(seconds)s seconds",
        ),
        count="seconds",
    ),
    "model.stalled": _step(
        "generate",
        ngettext(
            "The model server sent nothing for %(seconds)s second, so the answer stops here",
            "The model server sent nothing for %(seconds)s seconds, so the answer stops here",
        ),
        count="seconds",
    ),
    # …and the failures SPEC names (metadata.error's codes, agent/model_errors.py)
    "model.auth": _step(
        "generate", _("The model server refused the app's key, so there is no answer")
    ),
    "model.not_found": _step(
        "generate", _("The model server does not have this model, so there is no answer")
    ),
    "model.rate_limited": _step(
        "generate", _("The model server stayed busy, so there is no answer; try again soon")
    ),
    "model.context": _step(
        "generate", _("The conversation is too long for this model even when compressed")
    ),
    "model.unavailable": _step(
        "generate", _("The model server could not be reached, so there is no answer")
    ),
    "model.rejected": _step(
        "generate", _("The model server refused the request, so there is no answer")
    ),
    # …or the conversation's memory (its checkpoints, the database) failed, not the model
    "memory.unreachable": _step(
        "generate", _("The conversation's memory could not be reached, so the answer stops here")
    ),
    # tool calls and results: "tool.<name>.call|done|failed" (from TOOL_WORDS, below)
    # tool failures with a reason the person should hear (raised as ToolFailed)
    "calculator.division_by_zero": _step("tool_result", _("The calculator cannot divide by zero")),
    "calculator.too_large": _step("tool_result", _("The result is too large for the calculator")),
    "calculator.not_real": _step("tool_result", _("The result is not a real number")),
    "calculator.too_long": _step("tool_result", _("The expression is too long for the calculator")),
    "calculator.invalid": _step("tool_result", _("The calculator could not read that expression")),
    "documents.no_section": _step(
        "tool_result", _("Found no section %(section)s in your documents")
    ),
    "clock.unknown_zone": _step("tool_result", _("Did not recognise the time zone %(zone)s")),
    "memory.off": _step("tool_result", _("Memory is off, so nothing was changed")),
    "memory.sensitive_id": _step(
        "tool_result", _("Did not save this as a memory: it looks like an ID number")
    ),
    "memory.sensitive_financial": _step(
        "tool_result",
        _("Did not save this as a memory: it looks like a card or bank account number"),
    ),
    "memory.sensitive_contact": _step(
        "tool_result",
        _("Did not save this as a memory: it looks like a phone number or e-mail address"),
    ),
    "memory.sensitive_secret": _step(
        "tool_result", _("Did not save this as a memory: it looks like a password or secret key")
    ),
    "memory.too_long": _step(
        "tool_result",
        _("Did not save this as a memory: a memory holds at most %(limit)s characters"),
    ),
    "memory.full": _step(
        "tool_result", _("Did not save this as a memory: you already have %(limit)s memories")
    ),
    "memory.no_match": _step("tool_result", _("No saved memory matched, so nothing was deleted")),
    # the web tools (agent/tools/web.py; read_url's are agent/net.py's FetchProblem)
    "web.search_failed": _step("tool_result", _("The web search did not answer this time")),
    "web.bad_address": _step(
        "tool_result", _("Only web pages (http or https addresses) can be opened")
    ),
    "web.blocked": _step(
        "tool_result", _("Did not open %(host)s: it is not on the public internet")
    ),
    "web.unreachable": _step("tool_result", _("Could not reach %(host)s")),
    "web.too_slow": _step("tool_result", _("The page at %(host)s took too long to load")),
    "web.too_many_redirects": _step(
        "tool_result", _("The page at %(host)s forwarded to other addresses too many times")
    ),
    "web.page_error": _step(
        "tool_result", _("The page at %(host)s answered with an error (%(status)s)")
    ),
    "web.unsupported": _step("tool_result", _("Cannot read this kind of file (%(kind)s)")),
    "web.no_text": _step("tool_result", _("Found no readable text on the page at %(host)s")),
    # the Python sandbox (agent/tools/python_sandbox.py); a run a limit stopped is not a failure
    "python.unavailable": _step("tool_result", _("Python cannot run on this server right now")),
    "python.too_long": _step("tool_result", _("The code is too long to run")),
    # any tool: what stopped it
    "tool.timeout": _step("tool_result", _("%(tool)s took too long and was stopped")),
    "tool.unreachable": _step("tool_result", _("Could not reach %(server)s to use %(tool)s")),
}
for _name, _words in {
    **TOOL_WORDS,
    OTHER_TOOL: OTHER_TOOL_WORDS,
    MCP_TOOL: MCP_TOOL_WORDS,
}.items():
    STEPS[f"tool.{_name}.call"] = Step("tool_call", _words[0])
    STEPS[f"tool.{_name}.done"] = Step("tool_result", _words[1])
    STEPS[f"tool.{_name}.failed"] = Step("tool_result", _words[2])

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
