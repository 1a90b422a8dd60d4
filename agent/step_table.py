"""How a step's words are written down: the catalog markers and `Step` (agent/steps.py)."""

from __future__ import annotations

from dataclasses import dataclass

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


def mark(kind: ThinkingStep, words: str | tuple[str, str], count: str = "count") -> Step:
    """A step of `kind` with its words (one form, or a count's two from `ngettext`)."""
    if isinstance(words, tuple):
        return Step(kind, words[0], words[1], count)
    return Step(kind, words)
