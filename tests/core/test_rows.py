"""core/rows.py: rows written and read without querysets are the ORM's rows."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations import services
from conversations.models import Conversation, Message, ReplyRun
from conversations.replies import store
from core import rls, rows

pytestmark = pytest.mark.django_db


def test_fetch_builds_what_the_orm_builds(alice):
    conversation = services.create_conversation(user=alice, title="Plans")
    message = services.insert_message(
        conversation,
        services.NewMessage(
            role="assistant",
            content="안녕하세요",
            parts=[{"type": "text", "text": "안녕하세요"}],
            metadata={"usage": {"output_tokens": 3}},
            parent=None,
        ),
    )
    sql = f"SELECT *, 7 AS extra FROM {Message._meta.db_table} WHERE id = %s"
    found = rows.fetch(Message, sql, [Message._meta.pk.get_db_prep_value(message.pk, connection)])
    orm = Message.objects.get(pk=message.pk)
    for field in Message._meta.concrete_fields:
        assert getattr(found, field.attname) == getattr(orm, field.attname), field.name
    assert found.parts == [{"type": "text", "text": "안녕하세요"}]  # JSON, decoded
    assert found.extra == 7
    assert found._state.adding is False
    assert rows.fetch(Message, sql, [uuid.uuid4().hex if not _pg() else uuid.uuid4()]) is None


def test_insert_message_stores_counts_and_siblings_in_one_statement(alice):
    conversation = services.create_conversation(user=alice)
    question = services.insert_message(
        conversation, services.NewMessage(role="user", content="Hello there", created_by=alice)
    )
    first = services.insert_message(
        conversation, services.NewMessage(role="assistant", content="Hi", parent=question.pk)
    )
    with CaptureQueriesContext(connection) as queries:
        second = services.insert_message(
            conversation,
            services.NewMessage(role="assistant", content="Hello!", parent=question.pk),
        )
    if _pg():
        assert len(queries) == 1  # insert + counters + siblings
    assert second.sibling_ids == [str(first.pk), str(second.pk)]
    assert question.sibling_ids == [str(question.pk)]
    stored = Conversation.objects.get(pk=conversation.pk)
    assert stored.message_count == 3
    assert stored.last_sequence_number == 3
    assert stored.current_message_id == second.pk
    assert stored.title == "Hello there"  # first words
    assert stored.total_tokens_used == sum(
        Message.objects.filter(conversation=conversation).values_list("tokens_used", flat=True)
    )
    assert Message.objects.get(pk=second.pk).sequence_number == 3


def test_an_imported_time_is_kept(alice):
    conversation = services.create_conversation(user=alice)
    at = datetime(2024, 2, 29, 12, 0, tzinfo=UTC)
    message = services.insert_message(
        conversation, services.NewMessage(role="user", content="old", created_at=at, parent=None)
    )
    assert Message.objects.get(pk=message.pk).created_at == at
    assert Conversation.objects.get(pk=conversation.pk).last_message_at == at


def test_a_finished_run_stores_its_reply_once(alice):
    conversation = services.create_conversation(user=alice)
    run_id = uuid.uuid4()
    with rls.as_user(alice.pk):
        claim = store.claim_reply(
            user=alice,
            conversation_id=conversation.pk,
            ask=_send("What is RLS?"),
            run_id=run_id,
            owner="test",
        )
        assert store.running_run(conversation_id=conversation.pk).pk == run_id
        reply = store.Reply(content="Row-level security.", finish_reason="end_turn", parts=[])
        done = store.finish_run(
            conversation_id=conversation.pk, run_id=run_id, question=claim.user_message, reply=reply
        )
        again = store.finish_run(
            conversation_id=conversation.pk, run_id=run_id, question=claim.user_message, reply=reply
        )
    assert done.stored_now and not again.stored_now
    assert again.message.pk == done.message.pk == run_id
    assert done.message.sibling_ids == [str(run_id)]
    assert ReplyRun.objects.get(pk=run_id).status == ReplyRun.Status.FINISHED
    assert Message.objects.filter(conversation=conversation).count() == 2
    assert store.running_run(conversation_id=conversation.pk) is None


def test_a_missing_conversation_is_not_found():
    from core.errors import NotFound

    for bad in (uuid.uuid4(), "not-a-uuid", None):
        with pytest.raises(NotFound):
            services.lock_conversation(bad)


def _send(text: str):
    from conversations.api.schemas import MessageIn
    from conversations.replies.ask import Ask

    return Ask(kind="send", message=MessageIn(content=text))


def _pg() -> bool:
    return connection.vendor == "postgresql"
