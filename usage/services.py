"""Writing usage and refusing asks past the budget (reads: usage/selectors.py).

`record_reply` runs in the transaction that stores a reply (conversations/replies/
store.py), so a reply and its usage are stored together or not at all; `check_budget`
runs in the claim's transaction, before the ask stores anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext as _

from core import rows
from core.errors import BudgetExceeded
from core.user_turns import hold_user

from .budgets import budget_limit, budget_state
from .models import ConversationMonth, UsageRollup

# Seconds to wait when the budget's rest is held by running replies (they take seconds to
# a minute; the month's reset is not the time to come back).
RESERVED_RETRY_AFTER = 10

_TABLE = UsageRollup._meta.db_table
_UPSERT = f"""
INSERT INTO {_TABLE} (day, user_id, model, conversation_id, input_tokens, output_tokens, replies)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (day, user_id, model, conversation_id) DO UPDATE SET
  input_tokens = {_TABLE}.input_tokens + EXCLUDED.input_tokens,
  output_tokens = {_TABLE}.output_tokens + EXCLUDED.output_tokens,
  replies = {_TABLE}.replies + EXCLUDED.replies
"""
_MONTHS = ConversationMonth._meta.db_table
_UPSERT_MONTH = f"""
INSERT INTO {_MONTHS} (month, user_id, conversation_id, input_tokens, output_tokens, replies)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (month, user_id, conversation_id) DO UPDATE SET
  input_tokens = {_MONTHS}.input_tokens + EXCLUDED.input_tokens,
  output_tokens = {_MONTHS}.output_tokens + EXCLUDED.output_tokens,
  replies = {_MONTHS}.replies + EXCLUDED.replies
"""


def reply_tokens(metadata: dict[str, Any] | None) -> tuple[int, int]:
    """Return a reply's (input, output) tokens: its turn's `metadata.usage`, 0 if absent."""
    usage = (metadata or {}).get("usage") or {}
    counts = []
    for key in ("input_tokens", "output_tokens"):
        value = usage.get(key) if isinstance(usage, dict) else None
        counts.append(max(0, int(value)) if isinstance(value, int | float) else 0)
    return counts[0], counts[1]


def record_reply(
    *, user_id: Any, conversation_id: Any, model: str, metadata: Any, at: datetime
) -> None:
    """Add one stored reply's turn usage to its owner's rollup (in the caller's transaction).

    Only this turn's usage counts: a continued reply's `tokens_used` includes the cut-off
    reply's, which was counted when it was stored.
    """
    input_tokens, output_tokens = reply_tokens(metadata)
    record_usage(
        user_id=user_id,
        conversation_id=conversation_id,
        model=model,
        tokens=(input_tokens, output_tokens),
        at=at,
        replies=1,
    )


def record_usage(
    *,
    user_id: Any,
    conversation_id: Any,
    model: str,
    tokens: tuple[int, int],
    at: datetime,
    replies: int = 0,
) -> None:
    """Add (input, output) tokens a user caused to their rollup: a reply's (`replies=1`),
    or a model call besides one (a summary they asked for: `replies=0`)."""
    input_tokens, output_tokens = (max(0, int(n)) for n in tokens)
    day = (at.astimezone(UTC) if timezone.is_aware(at) else at).date()
    # On the default database (SQLite) every reply failed to store when a UUID went as is.
    conversation_id = rows.param(UsageRollup, "conversation_id", conversation_id)
    row = [user_id, conversation_id, input_tokens, output_tokens, replies]
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [day, row[0], model or "", *row[1:]])
        cursor.execute(_UPSERT_MONTH, [day.replace(day=1), *row])


def check_budget(
    *, user: Any, now: datetime | None = None, reserved: Callable[[], int] | None = None
) -> bool:
    """Refuse to start a model turn for `user` when this month's budget is used up; say
    whether a budget applies to them (False: no limit, nothing was read or locked).

    `reserved()`: the tokens the user's replies still running hold (their reservations);
    they count as used, so parallel sends cannot all pass on the same room. Under a budget
    the user's row is locked until the caller's transaction ends (call it inside the one
    that stores the turn's reservation): two claims check one after the other, each seeing
    the other's reservation.

    Raises BudgetExceeded (the caller's transaction then stores nothing). A reply already
    running is never cut: only the start of a turn is checked.
    """
    limit = budget_limit(user)
    if limit is None:
        return False  # most sites: no budget, so this month's usage is not summed at every claim
    now = now or timezone.now()
    hold_user(user.pk)
    state = budget_state(user, now=now, limit=limit)
    held = reserved() if reserved is not None else 0
    if state.limit is None or state.used + held < state.limit:
        return True
    figures = {
        "used": number_format(state.used, force_grouping=True),
        "limit": number_format(state.limit, force_grouping=True),
        "date": date_format(state.resets_at, "DATE_FORMAT"),
    }
    if state.used < state.limit:  # the rest is held by replies still being written
        raise BudgetExceeded(
            _(
                "Your replies still being written hold the rest of this month's token "
                "budget (%(used)s of %(limit)s tokens used). Try again when they finish."
            )
            % figures,
            retry_after=RESERVED_RETRY_AFTER,
        )
    raise BudgetExceeded(
        _(
            "You have used this month's token budget (%(used)s of %(limit)s tokens). "
            "It resets on %(date)s (UTC)."
        )
        % figures,
        retry_after=max(1, math.ceil((state.resets_at - now).total_seconds())),
    )
