"""The steps of tools: calling, done and failed for each tool, and the failures a tool
explains (`ToolFailed`'s codes). Merged into `agent.steps.STEPS`."""

from __future__ import annotations

from agent.step_table import Step, _

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
    "generate_image": (
        _("Drawing a picture"),
        _("Drew a picture"),
        _("Could not draw the picture"),
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

# Failures with a reason the person should hear (raised as `agent.steps.ToolFailed`).
TOOL_FAILURES: dict[str, str] = {
    "calculator.division_by_zero": _("The calculator cannot divide by zero"),
    "calculator.too_large": _("The result is too large for the calculator"),
    "calculator.not_real": _("The result is not a real number"),
    "calculator.too_long": _("The expression is too long for the calculator"),
    "calculator.invalid": _("The calculator could not read that expression"),
    "documents.no_section": _("Found no section %(section)s in your documents"),
    "clock.unknown_zone": _("Did not recognise the time zone %(zone)s"),
    "memory.off": _("Memory is off, so nothing was changed"),
    "memory.sensitive_id": _("Did not save this as a memory: it looks like an ID number"),
    "memory.sensitive_financial": _(
        "Did not save this as a memory: it looks like a card or bank account number"
    ),
    "memory.sensitive_contact": _(
        "Did not save this as a memory: it looks like a phone number or e-mail address"
    ),
    "memory.sensitive_secret": _(
        "Did not save this as a memory: it looks like a password or secret key"
    ),
    "memory.too_long": _(
        "Did not save this as a memory: a memory holds at most %(limit)s characters"
    ),
    "memory.full": _("Did not save this as a memory: you already have %(limit)s memories"),
    "memory.no_match": _("No saved memory matched, so nothing was deleted"),
    # the web tools (agent/tools/web.py; read_url's are agent/net.py's FetchProblem)
    "web.search_failed": _("The web search did not answer this time"),
    "web.bad_address": _("Only web pages (http or https addresses) can be opened"),
    "web.blocked": _("Did not open %(host)s: it is not on the public internet"),
    "web.unreachable": _("Could not reach %(host)s"),
    "web.too_slow": _("The page at %(host)s took too long to load"),
    "web.too_many_redirects": _("The page at %(host)s forwarded to other addresses too many times"),
    "web.page_error": _("The page at %(host)s answered with an error (%(status)s)"),
    "web.unsupported": _("Cannot read this kind of file (%(kind)s)"),
    "web.no_text": _("Found no readable text on the page at %(host)s"),
    # the Python sandbox (agent/tools/python_sandbox.py); a run a limit stopped is not a failure
    "python.unavailable": _("Python cannot run on this server right now"),
    # pictures (agent/tools/images.py)
    "image.unavailable": _("The model server cannot draw pictures"),
    "image.failed": _("The picture could not be made this time"),
    "python.too_long": _("The code is too long to run"),
    # any tool: what stopped it
    "tool.timeout": _("%(tool)s took too long and was stopped"),
    "tool.unreachable": _("Could not reach %(server)s to use %(tool)s"),
}
# The failures, and "tool.<name>.call|done|failed" for each tool.
TOOL_STEPS: dict[str, Step] = {
    code: Step("tool_result", text) for code, text in TOOL_FAILURES.items()
}
for _name, _words in {
    **TOOL_WORDS,
    OTHER_TOOL: OTHER_TOOL_WORDS,
    MCP_TOOL: MCP_TOOL_WORDS,
}.items():
    TOOL_STEPS[f"tool.{_name}.call"] = Step("tool_call", _words[0])
    TOOL_STEPS[f"tool.{_name}.done"] = Step("tool_result", _words[1])
    TOOL_STEPS[f"tool.{_name}.failed"] = Step("tool_result", _words[2])
