"""A person's prompts as a file: written into their data export (the zip of all their
conversations holds `prompts.json`) and from the Prompts page, read back by the import.

The file is `{"format": "chat-prompts", "version": 1, "prompts": [{command, title,
content}]}`. An import adds the prompts whose command the person does not use yet and
skips the others (never overwriting one); it is never shared, whatever the file says.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from django.db import transaction
from django.utils.translation import gettext as _
from ninja import Schema
from pydantic import Field

from core.errors import Invalid
from core.schemas import FormatVersion, Input
from core.user_turns import hold_user

from .models import MAX_PROMPTS, Prompt
from .schemas import Command, PromptText, PromptTitle

FORMAT = "chat-prompts"
FILENAME = "prompts.json"


class PromptFileItem(Input):
    command: Command
    title: PromptTitle
    content: PromptText


class PromptsFileIn(Input):
    """A prompts file, as the export writes it."""

    format: Literal["chat-prompts"]
    version: FormatVersion
    prompts: list[PromptFileItem] = Field(max_length=MAX_PROMPTS)


class PromptsImportOut(Schema):
    created: list[str] = Field(description="the commands added")
    skipped: list[str] = Field(description="commands you already use: left as they are")


def export_prompts(*, user: Any) -> dict[str, Any]:
    """Return the user's own prompts as the file holds them (shared ones are staff's)."""
    own = Prompt.objects.filter(owner_id=user.pk).order_by("command")
    return {
        "format": FORMAT,
        "version": 1,
        "prompts": [
            {"command": p.command, "title": p.title, "content": p.content}
            for p in own.only("command", "title", "content")
        ],
    }


def export_file(*, user: Any) -> bytes | None:
    """Return the user's prompts file (None: they have none)."""
    data = export_prompts(user=user)
    if not data["prompts"]:
        return None
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


@transaction.atomic
def import_prompts(*, user: Any, data: PromptsFileIn) -> PromptsImportOut:
    """Add the file's prompts whose command the user does not use yet (all or nothing)."""
    hold_user(user.pk)
    used = set(Prompt.objects.filter(owner_id=user.pk).values_list("command", flat=True))
    created: list[str] = []
    skipped: list[str] = []
    for item in data.prompts:
        (skipped if item.command in used else created).append(item.command)
        used.add(item.command)
    if len(used) > MAX_PROMPTS:
        raise Invalid(
            _("You would have %(n)s prompts; one person may keep %(max)s.")
            % {"n": len(used), "max": MAX_PROMPTS}
        )
    adding = {item.command: item for item in data.prompts if item.command in created}
    Prompt.objects.bulk_create(
        Prompt(owner_id=user.pk, command=c, title=i.title, content=i.content)
        for c, i in adding.items()
    )
    return PromptsImportOut(created=list(adding), skipped=skipped)
