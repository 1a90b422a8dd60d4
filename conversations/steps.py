"""A reply's steps in the reader's language (the `step_text` filter; static/js/steps.js).

A step (a `thinking` frame, or a `thinking`/`tool_call`/`tool_result` part) carries a code
and params from agent/steps.py; it is translated here, when shown, so a conversation reads
in the language of whoever opens it. Older parts without a code show their stored words,
and older tool parts get the words of their tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.translation import gettext, ngettext

from agent.steps import MODEL_FAULTS, OTHER_TOOL, STEPS, TOOL_WORDS, count_of, fill, tool_code

JS_CATALOG = Path("static/js/step_catalog.js")
DETAIL_CHARS = 2000
# A `thinking` part with this step holds a model's own reasoning (its `content`, and
# `seconds` when known): shown folded above the reply, never listed among its steps.
THINKING_PART = "thinking"  # a part's type (the frame of the same name is events.py's)
REASONING = "reasoning"


def step_code(part: Any) -> str | None:
    """Return a step's code: its own, or for a tool part stored without one, its tool's."""
    if not isinstance(part, dict):
        return None
    code = part.get("code")
    if isinstance(code, str) and code in STEPS:
        return code
    if code is None and part.get("type") in ("tool_call", "tool_result"):
        name = str(part.get("name") or "")
        if part["type"] == "tool_call":
            return tool_code(name, "call")
        return tool_code(name, "failed" if part.get("is_error") else "done")
    return None


def step_params(part: dict[str, Any]) -> dict[str, Any]:
    """Return a step's params (a tool part stored without them gets its tool's name)."""
    params = part.get("params")
    if isinstance(params, dict):
        return params
    return {"tool": str(part.get("name") or "")}


def step_text(part: Any) -> str:
    """Return the step as a sentence in the active language."""
    code = step_code(part)
    if code is None:
        text = part.get("content") if isinstance(part, dict) else None
        return text if isinstance(text, str) else ""
    step = STEPS[code]
    params = step_params(part)
    if step.plural:
        template = ngettext(step.text, step.plural, count_of(step, params))
    else:
        template = gettext(step.text)
    return fill(template, params)


def fault_text(parts: Any) -> str:
    """Return the last step of `parts` that says why the reply failed (MODEL_FAULTS), as a
    sentence in the active language; "" when there is none."""
    faults = [p for p in parts or () if step_code(p) in MODEL_FAULTS]
    return step_text(faults[-1]) if faults else ""


# A reply that saved or deleted a memory says so under it ("Memory updated", as ChatGPT).
MEMORY_CHANGES = frozenset({"tool.remember.done", "tool.forget.done"})


def changed_memory(parts: Any) -> bool:
    """Say whether a reply's steps saved or deleted one of the person's memories."""
    return any(step_code(p) in MEMORY_CHANGES for p in parts or ())


def finish_note(finish_reason: str, parts: Any) -> str:
    """Return what a reply that did not end by itself says under it, in the active language
    (why it failed, when a step tells); "" for a reply that ended."""
    if finish_reason == "error":
        return fault_text(parts) or gettext("The reply failed.")
    notes = {
        "stopped": gettext("Stopped."),
        "interrupted": gettext("Interrupted."),
        "max_tokens": gettext("Cut off at the length limit."),
    }
    return notes.get(finish_reason, "")


def step_details(part: Any) -> list[dict[str, str]]:
    """Return what a tool step may show under its sentence, labelled: a call's input, a
    result's output. A failure shows nothing more (its error text was for the model)."""
    code = step_code(part)
    if code is None:
        return []
    params = step_params(part)
    if STEPS[code].kind == "tool_call":
        args = part.get("args", params.get("args"))
        if not args:
            return []
        # An imported call may hold its input as the text it was (ChatGPT's tools).
        value = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return [{"label": gettext("Input"), "value": value[:DETAIL_CHARS]}]
    if not (code.startswith("tool.") and code.endswith(".done")):
        return []
    # Ours keep the whole result as `output`; older and imported parts as `content`.
    output = part.get("output") or params.get("result")
    if "code" not in part:
        output = part.get("content")
    if not isinstance(output, str) or not output:
        return []
    return [{"label": gettext("Result"), "value": output[:DETAIL_CHARS]}]


def javascript_catalog() -> str:
    """Return static/js/step_catalog.js: every step's English words inside `_()` and
    `ngettext()` calls, so `makemessages -d djangojs` collects them for the JS catalog."""
    lines = [
        "// Generated from agent/steps.py by `python manage.py step_catalog`: do not edit.",
        "// Every step's English words, translated by Django's JavaScript catalog.",
        'import { _, ngettext } from "./i18n.js";',
        "",
        f"export const TOOLS = {json.dumps(sorted(TOOL_WORDS))};",
        f"export const OTHER_TOOL = {json.dumps(OTHER_TOOL)};",
        "",
        "export const STEPS = {",
    ]
    for code, step in STEPS.items():
        key = json.dumps(code)
        if step.plural:
            count = f"Number(p[{json.dumps(step.count)}]) || 0"
            words = f"ngettext({_js(step.text)}, {_js(step.plural)}, {count})"
            lines.append(f"  {key}: (p) => {words},")
        else:
            lines.append(f"  {key}: () => _({_js(step.text)}),")
    lines += ["};", ""]
    return "\n".join(lines)


def _js(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def write_javascript_catalog(*, check: bool = False) -> bool:
    """Write the JS catalog (or, with `check`, only compare); return whether it was current."""
    path = Path(settings.BASE_DIR) / JS_CATALOG
    wanted = javascript_catalog()
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if current == wanted:
        return True
    if not check:
        path.write_text(wanted, encoding="utf-8")
    return False
