"""Conversations, their messages, feedback and projects (SPEC's data model), one module
per part; everything is importable from here as it always was."""

from .conversation import (
    DESCRIPTION_MAX_LENGTH,
    ID_MAX_LENGTH,
    MAX_ATTACHMENTS,
    PROJECT_NAME_MAX_LENGTH,
    SERVICE_ID_MAX_LENGTH,
    TITLE_MAX_LENGTH,
    Conversation,
    Project,
    Share,
)
from .message import (
    MESSAGE_RECORD_FIELDS,
    TOKENS_ESTIMATED,
    TOKENS_ESTIMATED_Q,
    Attachment,
    Message,
    MessageFeedback,
    metadata_says_estimated,
)
from .reply_run import ReplyRun

__all__ = [
    "DESCRIPTION_MAX_LENGTH",
    "ID_MAX_LENGTH",
    "MAX_ATTACHMENTS",
    "MESSAGE_RECORD_FIELDS",
    "PROJECT_NAME_MAX_LENGTH",
    "SERVICE_ID_MAX_LENGTH",
    "TITLE_MAX_LENGTH",
    "TOKENS_ESTIMATED",
    "TOKENS_ESTIMATED_Q",
    "Attachment",
    "Conversation",
    "Message",
    "MessageFeedback",
    "Project",
    "ReplyRun",
    "Share",
    "metadata_says_estimated",
]
