"""Import a JSON export as a new conversation of the importer; refuse anything malformed."""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass, field
from typing import IO, Any

from django.conf import settings
from django.db import DataError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from pydantic import ValidationError

from agent.tokens import estimate_tokens
from conversations import events
from conversations.models import (
    TITLE_MAX_LENGTH,
    TOKENS_ESTIMATED,
    Conversation,
    Message,
    MessageFeedback,
)
from conversations.services import recount
from conversations.tree import Tree
from core.models_on_offer import find_model
from core.schemas import describe_error

from .export_format import ExportedMessage, ExportFile
from .import_formats import OURS, InvalidImport, read_conversations

MAX_CONVERSATIONS = 100_000
MAX_SKIPPED_LISTED = 1000
BATCH = 1000


def max_import_bytes() -> int:
    """Return the largest accepted conversation (one JSON object), in bytes."""
    return settings.CHAT_IMPORT_MAX_BYTES


def max_import_file_bytes() -> int:
    """Return the largest accepted import file (many conversations, streamed), in bytes."""
    return settings.CHAT_IMPORT_MAX_FILE_BYTES


def validate_export(data: Any, *, where: str = "") -> ExportFile:
    """Validate one conversation in export shape (this app's, or another app's converted
    by import_formats); refuse it naming the field at fault."""
    try:
        return ExportFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        at = [where] if where else ["file"] if not error["loc"] else []
        raise InvalidImport(describe_error({**error, "loc": [*at, *error["loc"]]})[:300]) from None


@dataclass(frozen=True)
class Skipped:
    """A conversation of the file that was not imported, and why (nothing of it stored)."""

    index: int
    title: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "title": self.title, "reason": self.reason}


@dataclass
class Imported:
    """What one import file became: the app that wrote it, the new conversations, and the
    conversations it holds that could not be read."""

    format: str
    conversations: list[Conversation]
    skipped: list[Skipped] = field(default_factory=list)
    skipped_count: int = 0


@transaction.atomic
def import_file(*, user: Any, source: IO[bytes]) -> Imported:
    """Import every conversation of a file (any format import_formats reads) for `user`.
    One that cannot be read or stored is skipped whole and listed; a file with none that
    can be is refused (400, naming where the first one failed). Memory holds one
    conversation at a time."""
    imported = Imported(format="", conversations=[])
    formats: set[str] = set()
    first_failure = ""
    for entry in read_conversations(
        source, max_bytes=max_import_file_bytes(), max_conversation_bytes=max_import_bytes()
    ):
        if entry.index >= MAX_CONVERSATIONS:
            raise InvalidImport(f"file: more than {MAX_CONVERSATIONS} conversations.")
        try:
            if entry.data is None:
                raise InvalidImport(f"{entry.where}: {entry.reason}")
            # This app's file of one conversation names fields from its top.
            where = "" if entry.where == "file" and entry.format == OURS else entry.where
            export = validate_export(entry.data, where=where or "")
            with transaction.atomic():  # a savepoint: a refused row takes only its own
                conversation = store_conversation(user=user, export=export, app=entry.format)
        except (InvalidImport, DataError) as exc:
            message = exc.message if isinstance(exc, InvalidImport) else f"{entry.where}: {exc}"
            first_failure = first_failure or message
            imported.skipped_count += 1
            if len(imported.skipped) < MAX_SKIPPED_LISTED:
                reason = message.removeprefix(entry.where).lstrip(".: ")
                imported.skipped.append(Skipped(entry.index, entry.title, reason[:300]))
            continue
        formats.add(entry.format)
        imported.conversations.append(conversation)
    if not imported.conversations:
        raise InvalidImport((first_failure or "file: it holds no conversation.")[:300])
    imported.format = "+".join(sorted(formats))
    return imported


def export_file_schema() -> dict[str, Any]:
    """Return the JSON schema of an export file, references resolved (for OpenAPI)."""
    schema = ExportFile.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)


def _with_notes(row: ExportedMessage, more: list[str]) -> dict[str, Any]:
    """The row's metadata, noting the files it was sent with (their bytes are not here) and
    `more` (what the conversation could not keep as it was)."""
    metadata = dict(row.metadata or {})
    added = [f"attachment {a.name} ({a.content_type}) not in the file" for a in row.attachments]
    added += more
    if not added:
        return metadata
    note = metadata.get("import")
    note = dict(note) if isinstance(note, dict) else {}
    notes = note.get("notes")
    notes = list(notes) if isinstance(notes, list) else []
    metadata["import"] = {**note, "notes": notes + added}
    return metadata


def _model_note(model: str) -> str:
    """Say which model made an imported conversation this site does not offer."""
    return f"made with {model}; answered here by the default model"


def _with_token_mark(metadata: dict[str, Any], estimated: bool) -> dict[str, Any]:
    """The metadata, saying that `tokens_used` is our estimate when it is."""
    return {**metadata, TOKENS_ESTIMATED: True} if estimated else metadata


def import_conversation(*, user: Any, raw: bytes | str) -> Conversation:
    """Create the user's conversation from a file holding one; all or nothing."""
    data = raw.encode() if isinstance(raw, str) else raw
    imported = import_file(user=user, source=io.BytesIO(data))
    if len(imported.conversations) != 1:
        raise InvalidImport("file: expected one conversation.")
    return imported.conversations[0]


# How an imported copy is told apart from a conversation of the same title: the app that
# wrote it, or "imported" for this app's own export.
APP_NAMES = {
    "chatgpt": "ChatGPT",
    "claude": "Claude",
    "openwebui": "Open WebUI",
    "librechat": "LibreChat",
}


def copy_title(user: Any, title: str, app: str) -> str:
    """Return an imported conversation's title: as it was, or marked when the user already
    has a conversation of that title (two identical rows in the sidebar tell nothing)."""
    if not title or not Conversation.objects.filter(created_by=user, title=title).exists():
        return title
    suffix = f" ({APP_NAMES.get(app) or _('imported')})"
    return title[: TITLE_MAX_LENGTH - len(suffix)].rstrip() + suffix


def store_conversation(*, user: Any, export: ExportFile, app: str = OURS) -> Conversation:
    """Create the user's conversation from a validated export (in the caller's transaction);
    `app`: the format it came in (import_formats' reader name, or OURS)."""
    header = export.conversation
    rows = sorted(export.messages, key=lambda m: m.sequence_number)
    offered = bool(header.model) and find_model(header.model) is not None
    lost = [] if offered or not header.model else [_model_note(header.model)]
    conversation = Conversation.objects.create(
        created_by=user,
        status=Conversation.Status.SUMMARIZED if header.summary else Conversation.Status.ACTIVE,
        title=copy_title(user, header.title or "", app),
        description=header.description or "",
        service_id=header.service_id or "",
        summary=header.summary or "",
        summary_at=header.summary_at,
        # A model this site does not offer falls back to the default, as for a model
        # taken off the list later; the first message's notes keep its name.
        model=header.model if offered else "",
        system_prompt=header.system_prompt or "",
        temperature=header.temperature,
        pinned=bool(header.pinned),
        tools=header.tools,
    )
    if header.created_at is not None:  # auto_now_add stamped "now"
        Conversation.objects.filter(pk=conversation.pk).update(created_at=header.created_at)
        conversation.created_at = header.created_at
    now = timezone.now()
    new_ids = {row.id: uuid.uuid4() for row in rows if row.id is not None}
    as_tree = any(row.parent_id is not None for row in rows)
    previous: uuid.UUID | None = None
    parents: list[uuid.UUID | None] = []
    own_ids: list[uuid.UUID] = []
    for row in rows:
        own = new_ids.get(row.id) if row.id is not None else None
        own = own or uuid.uuid4()
        # A file without parent_id (older exports) is one branch in its order.
        parents.append(new_ids.get(row.parent_id) if as_tree else previous)  # type: ignore[arg-type]
        own_ids.append(own)
        previous = own
    # A message the file gives no count for (other apps' never do): our estimate, marked.
    estimated = [row.tokens_used is None for row in rows]
    tokens = [
        estimate_tokens(row.content or "") if row.tokens_used is None else row.tokens_used
        for row in rows
    ]
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        Message.objects.bulk_create(
            Message(
                id=own_ids[start + offset],
                parent_id=parents[start + offset],
                conversation=conversation,
                role=row.role,
                content=row.content or "",
                parts=row.parts,
                model=row.model or "",
                tokens_used=tokens[start + offset],
                finish_reason=row.finish_reason or "",
                metadata=_with_token_mark(
                    _with_notes(row, lost if start + offset == 0 else []),
                    estimated[start + offset],
                ),
                # Numbered 1..n in the file's order.
                sequence_number=start + offset + 1,
                created_by=user if row.role == Message.Role.USER else None,
                created_at=row.created_at or now,
            )
            for offset, row in enumerate(chunk)
        )
    MessageFeedback.objects.bulk_create(
        MessageFeedback(
            user=user,
            message_id=own,
            rating=row.feedback.rating,
            comment=row.feedback.comment or "",
        )
        for own, row in zip(own_ids, rows, strict=True)
        if row.feedback is not None and row.role == Message.Role.ASSISTANT
    )
    tree = Tree.of(conversation.pk)
    current = header.current_message_id
    conversation.current_message_id = (
        new_ids[current] if current is not None else tree.newest_leaf(None)
    )
    recount(conversation, also_save=("current_message",))
    events.send_on_commit(events.conversation_updated(conversation), user_id=user.pk)
    return conversation
