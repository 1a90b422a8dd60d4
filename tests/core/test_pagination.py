"""Keyset pages (core/pagination.py) against the real database: compound keys, both
directions, NULLs last, tampered cursors, the last page."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conversations.models import Conversation
from core.errors import Invalid
from core.pagination import KeyField, SortKey, paginate

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
COUNT_THEN_TITLE = (KeyField("message_count", int), KeyField("title", str))
LAST_MESSAGE = KeyField("last_message_at", datetime, nullable=True)


def conversations(user: Any, rows: list[dict[str, Any]]) -> list[Conversation]:
    """Create a conversation of `user` per row, then set the row's fields as given."""
    made = []
    for fields in rows:
        conversation = Conversation.objects.create(created_by=user, title="t")
        Conversation.objects.filter(pk=conversation.pk).update(**fields)
        conversation.refresh_from_db()
        made.append(conversation)
    return made


def walk(sort: SortKey, *, limit: int, key: str = "test") -> list[uuid.UUID]:
    """Read every page of the conversations in `sort`'s order; return the ids in order."""
    seen: list[uuid.UUID] = []
    cursor = None
    while True:
        page = paginate(Conversation.objects.all(), sort=sort, cursor=cursor, limit=limit, key=key)
        assert len(page.items) <= limit
        seen += [row.pk for row in page.items]
        if page.next_cursor is None:
            return seen
        assert len(page.items) == limit
        cursor = page.next_cursor


def ties(user: Any) -> list[Conversation]:
    """Seven conversations that tie on the count, and some on the title too."""
    return conversations(
        user,
        [{"message_count": i % 2, "title": "ab"[i % 3 % 2]} for i in range(7)],
    )


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_a_compound_key_pages_in_order_without_gaps_or_repeats(alice, limit):
    rows = ties(alice)
    expected = sorted(rows, key=lambda c: (c.message_count, c.title, c.pk))
    assert walk(SortKey(COUNT_THEN_TITLE), limit=limit) == [c.pk for c in expected]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_descending_key_pages_from_the_largest(alice, limit):
    rows = ties(alice)
    expected = sorted(rows, key=lambda c: (c.message_count, c.title, c.pk), reverse=True)
    assert walk(SortKey(COUNT_THEN_TITLE, descending=True), limit=limit) == [c.pk for c in expected]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("limit", [1, 2, 4])
def test_nulls_come_last_in_both_directions_across_pages(alice, descending, limit):
    times = [T0, None, T0 + timedelta(minutes=1), None, T0, None, T0 - timedelta(minutes=1)]
    rows = conversations(alice, [{"last_message_at": at} for at in times])
    present = sorted(
        (c for c in rows if c.last_message_at is not None),
        key=lambda c: (c.last_message_at, c.pk),
        reverse=descending,
    )
    missing = sorted((c for c in rows if c.last_message_at is None), key=lambda c: c.pk)
    if descending:
        missing.reverse()
    sort = SortKey((LAST_MESSAGE,), descending=descending)
    assert walk(sort, limit=limit) == [c.pk for c in present + missing]


def test_the_last_page_has_no_next_cursor(alice):
    conversations(alice, [{"message_count": n} for n in range(4)])
    sort = SortKey((KeyField("message_count", int),))
    full = paginate(Conversation.objects.all(), sort=sort, cursor=None, limit=4, key="k")
    assert len(full.items) == 4 and full.next_cursor is None
    first = paginate(Conversation.objects.all(), sort=sort, cursor=None, limit=3, key="k")
    assert [c.message_count for c in first.items] == [0, 1, 2] and first.next_cursor
    rest = paginate(
        Conversation.objects.all(), sort=sort, cursor=first.next_cursor, limit=3, key="k"
    )
    assert [c.message_count for c in rest.items] == [3] and rest.next_cursor is None


def test_an_empty_list_is_one_empty_page(alice):
    page = paginate(
        Conversation.objects.none(), sort=SortKey(COUNT_THEN_TITLE), cursor=None, limit=5, key="k"
    )
    assert page.items == [] and page.next_cursor is None


def test_a_page_is_one_query(alice, django_assert_num_queries):
    conversations(alice, [{"message_count": n} for n in range(5)])
    sort = SortKey((KeyField("message_count", int),))
    first = paginate(Conversation.objects.all(), sort=sort, cursor=None, limit=2, key="k")
    with django_assert_num_queries(1):
        paginate(Conversation.objects.all(), sort=sort, cursor=first.next_cursor, limit=2, key="k")


ID = "00000000-0000-0000-0000-000000000001"
NOON = {"t": "2024-05-01T12:00:00+00:00"}


def forged(key: str, values: Any) -> str:
    """Return a cursor holding exactly `values` (JSON), as a client could write one."""
    raw = json.dumps([key, values]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ("other", [NOON, ID]),  # made for another order
        ("k", "not a list"),
        ("k", [NOON]),  # no id
        ("k", [NOON, ID, ID]),  # one value too many
        ("k", [NOON, 5]),  # an id that is not a string
        ("k", [NOON, None]),
        ("k", [NOON, "not-a-uuid"]),
        ("k", [NOON, "0" * 100]),
        ("k", ["yesterday", ID]),  # a time that is a string
        ("k", [True, ID]),  # a boolean is neither a time nor a number
        ("k", [[1], ID]),
        ("k", [{"t": "noon"}, ID]),
        ("k", [{"t": "2024-05-01T12:00:00"}, ID]),  # no time zone
        ("k", [{"t": "0001-01-01T00:30:00+05:00"}, ID]),  # before year 1 in UTC
    ],
)
def test_a_tampered_cursor_is_refused(alice, key, values):
    sort = SortKey((LAST_MESSAGE,))
    with pytest.raises(Invalid) as refused:
        paginate(
            Conversation.objects.all(), sort=sort, cursor=forged(key, values), limit=5, key="k"
        )
    assert refused.value.code == "bad_cursor"


@pytest.mark.parametrize("cursor", ["garbage", "eyJ4IjoxfQ", "%%%", "W10"])
def test_a_cursor_that_is_not_one_is_refused(alice, cursor):
    sort = SortKey(COUNT_THEN_TITLE)
    with pytest.raises(Invalid) as refused:
        paginate(Conversation.objects.all(), sort=sort, cursor=cursor, limit=1, key="k")
    assert refused.value.code == "bad_cursor"


@pytest.mark.parametrize(
    "values",
    [
        [None, "a", ID],  # NULL in a field that is never NULL
        [2**63, "a", ID],  # beyond a 64-bit integer
        [1.5, "a", ID],  # a number of the wrong kind
        [1, 2, ID],  # a title that is a number
    ],
)
def test_a_value_of_the_wrong_kind_is_refused(alice, values):
    sort = SortKey(COUNT_THEN_TITLE)
    with pytest.raises(Invalid) as refused:
        paginate(
            Conversation.objects.all(), sort=sort, cursor=forged("k", values), limit=1, key="k"
        )
    assert refused.value.code == "bad_cursor"
