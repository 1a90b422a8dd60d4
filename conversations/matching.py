"""Which of the user's messages hold some words, through the indexes even under RLS (PostgreSQL).

Row-level security keeps a full-text or substring match from its GIN index when the app
role asks: the planner may put only LEAKPROOF operators ahead of a policy, and neither `@@`
nor pg_trgm's `ILIKE` is. The search functions of core/migrations/0002 search as
`chat_search`, a role the policies leave whole, and apply the owner filter themselves from
the scope's `app.user_id` (never from an argument). Each helper here returns a subquery of
the ids they name, for a query that then reads those rows as usual, under RLS.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from django.db.models.expressions import RawSQL

WORD = re.compile(r"\w+")


def escape_like(value: str) -> str:
    """Return `value` with LIKE's wildcards (and the escape character) escaped."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def like_pattern(term: str) -> str:
    """Return the `ILIKE` pattern matching `term` anywhere."""
    return f"%{escape_like(term)}%"


def prefix_tsquery(term: str) -> str | None:
    """Return the `simple` tsquery of words starting with `term`, or None for a term that
    is not a plain word ("100%" must not find "1000")."""
    return f"'{term}':*" if WORD.fullmatch(term) else None


def messages_matching(
    terms: list[str], *, column: Literal["id", "conversation_id"] = "id"
) -> RawSQL:
    """Return a subquery of `column` of the messages, in the listed conversations of the user
    in scope, that match every term: as a substring, or as a word prefix."""
    if column not in ("id", "conversation_id"):
        raise ValueError(column)
    return RawSQL(
        f"SELECT {column} FROM conversations_message_matches(%s::text[], %s::text[])",
        ([like_pattern(t) for t in terms], [prefix_tsquery(t) for t in terms]),
    )


def recent_messages_holding(*, conversation_id: Any, words: list[str], limit: int) -> RawSQL:
    """Return a subquery of the ids of the `limit` newest user and assistant messages of one
    of the user's conversations that hold a word starting with one of `words` (words that
    are not plain words: that substring)."""
    prefixes = [p for p in map(prefix_tsquery, words) if p]
    patterns = [like_pattern(w) for w in words if prefix_tsquery(w) is None]
    return RawSQL(
        "SELECT id FROM conversations_recall_matches(%s::uuid, %s::text, %s::text[], %s)",
        (str(conversation_id), " | ".join(prefixes) or None, patterns, int(limit)),
    )
