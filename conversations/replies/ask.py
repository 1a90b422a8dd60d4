"""What a reply answers: one typed request every entry point builds and `start_reply` takes.

The user's words arrive already validated (`MessageIn`, the API's body and the socket's
frame); here only the rules that depend on the site's settings are judged: the length
limit and the sensitive-information check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.utils.translation import gettext as _
from pydantic import ValidationError

from core.errors import Invalid, SensitiveInfo, TooLarge
from core.schemas import first_error
from text import sensitive

from ..schemas import MessageIn

Kind = Literal["send", "regenerate", "edit", "continue"]


@dataclass(frozen=True)
class Ask:
    """A new message to answer (send), or a new version of an earlier one."""

    kind: Kind = "send"
    message: MessageIn | None = None  # send, edit: the user's words
    message_id: Any = None  # regenerate, edit, continue: the message acted on
    model: str | None = None  # regenerate: this reply only, with another model

    def __post_init__(self) -> None:
        if (self.message is not None) != (self.kind in ("send", "edit")):
            problem = (
                _("A %(kind)s takes no message.")
                if self.message
                else _("A %(kind)s needs a message.")
            )
            raise Invalid(problem % {"kind": self.kind})
        if (self.message_id is None) != (self.kind == "send"):
            problem = (
                _("A %(kind)s needs a message id.")
                if self.message_id is None
                else _("A %(kind)s takes no message id.")
            )
            raise Invalid(problem % {"kind": self.kind})

    @classmethod
    def send(cls, content: str, **fields: Any) -> Ask:
        """Ask for an answer to new words (`fields`: client_id, attachments…)."""
        return cls(message=_message(content, fields))

    @classmethod
    def edit(cls, message_id: Any, content: str, **fields: Any) -> Ask:
        """Ask for an answer to new words beside the user message `message_id`."""
        return cls("edit", _message(content, fields), message_id)

    @classmethod
    def regenerate(cls, message_id: Any, *, model: str | None = None) -> Ask:
        """Ask for another answer to the question `message_id` is (or answers)."""
        return cls("regenerate", None, message_id, model or None)

    @classmethod
    def continue_from(cls, message_id: Any) -> Ask:
        """Ask to go on from the cut-off reply `message_id`."""
        return cls("continue", None, message_id)

    @property
    def content(self) -> str | None:
        return self.message.content if self.message else None

    @property
    def client_id(self) -> str | None:
        return self.message.client_id if self.message else None

    @property
    def attachments(self) -> list[Any]:
        return self.message.attachments if self.message else []

    @property
    def models(self) -> tuple[str, ...]:
        """Side by side: the two models answering the message (none: one reply)."""
        return tuple(self.message.models) if self.message else ()


def _message(content: str, fields: dict[str, Any]) -> MessageIn:
    """Validate words given in code (a terminal line) as the API validates a body."""
    try:
        return MessageIn(content=content, **fields)
    except ValidationError as exc:
        raise Invalid(first_error(exc)) from None


def check_message(ask: Ask) -> tuple[str, ...]:
    """Judge the ask's words by the site's rules; return the kinds of sensitive information
    the user confirmed storing. Raises TooLarge or SensitiveInfo."""
    if ask.message is None:
        return ()
    if len(ask.message.content) > settings.MESSAGE_MAX_CHARS:
        raise TooLarge(
            _("Message is longer than %(n)s characters.") % {"n": settings.MESSAGE_MAX_CHARS}
        )
    return check_sensitive(ask.message.content, confirmed=ask.message.confirm_sensitive)


def check_sensitive(content: str, *, confirmed: bool) -> tuple[str, ...]:
    """Return the kinds of sensitive information `content` holds, when it may be stored
    (none found, SENSITIVE_CHECK off, or confirmed under `warn`); else raise SensitiveInfo."""
    mode = settings.SENSITIVE_CHECK
    if mode == "off":
        return ()
    findings = sensitive.find(content)
    if not findings:
        return ()
    kinds = tuple(sorted({f.kind for f in findings}))
    if mode == "warn" and confirmed:
        return kinds
    raise SensitiveInfo(
        _("The message looks like it holds sensitive information (%(kinds)s).")
        % {"kinds": ", ".join(kinds)},
        findings=[f.as_dict() for f in findings],
        can_confirm=mode == "warn",
    )
