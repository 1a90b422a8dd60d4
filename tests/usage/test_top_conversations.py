"""The staff page's top conversations and totals by user over any range: whole months come
from the monthly table, the days around them from the daily rollup, and the sums are the
same as adding up every reply of the range."""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import transaction

from core import rls
from usage import selectors, services

pytestmark = pytest.mark.django_db

RANGES = [
    (date(2026, 1, 1), date(2026, 12, 31)),  # whole months only
    (date(2026, 2, 10), date(2026, 6, 20)),  # partial months at both ends
    (date(2026, 3, 1), date(2026, 3, 15)),  # no whole month
    (date(2026, 4, 5), date(2026, 4, 5)),  # one day
    (date(2026, 1, 31), date(2026, 3, 1)),  # one whole month between two single days
]


def test_top_conversations_add_up_every_reply_in_any_range(alice, bob):
    rng = random.Random(5)
    conversations = [(uuid.uuid4(), rng.choice([alice, bob])) for _ in range(15)]
    replies = []
    with rls.maintenance(), transaction.atomic():
        for _ in range(400):
            conversation_id, user = rng.choice(conversations)
            at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randrange(525_000))
            tokens = {"input_tokens": rng.randint(1, 500), "output_tokens": rng.randint(1, 90)}
            services.record_reply(
                user_id=user.pk,
                conversation_id=conversation_id,
                model=rng.choice(["a", "b"]),
                metadata={"usage": tokens},
                at=at,
            )
            replies.append((conversation_id, at.date(), sum(tokens.values()), user.username))
    for start, end in RANGES:
        expected, by_user = Counter(), Counter()
        for conversation_id, day, tokens, username in replies:
            if start <= day <= end:
                expected[conversation_id] += tokens
                by_user[username] += tokens
        with rls.maintenance():
            top = selectors.top_conversations(start=start, end=end, limit=100)
            users = selectors.staff_usage(start=start, end=end, group="user").items
        assert {u.key: u.total_tokens for u in users} == dict(by_user), (start, end)
        assert {t.conversation_id: t.total_tokens for t in top} == dict(expected), (start, end)
        assert [t.total_tokens for t in top] == sorted(expected.values(), reverse=True)
        assert all(t.deleted for t in top)  # no conversation rows: all shown as deleted


def test_an_imported_conversation_is_not_usage_even_when_the_rollup_is_rebuilt(
    alice, require_postgres
):  # the rebuild is PostgreSQL's (SQLite has no backfill)
    from django.db import connection

    from transfers import imports
    from usage.backfill import backfill
    from usage.models import UsageRollup

    usage = {"input_tokens": 900, "output_tokens": 100}
    export = {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {"title": "From another site"},
        "messages": [
            {"sequence_number": 1, "role": "user", "content": "Hi"},
            {"sequence_number": 2, "role": "assistant", "content": "Hello!", "tokens_used": 100,
             "metadata": {"usage": usage}},
        ],
    }  # fmt: skip
    conversation = imports.import_conversation(user=alice, raw=json.dumps(export))
    assert conversation.messages.get(role="assistant").metadata["usage"] == usage
    with rls.maintenance():
        assert not UsageRollup.objects.exists()
        with connection.cursor() as cursor:
            backfill(cursor)
        assert not UsageRollup.objects.exists()
