from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from conversations import selectors, services
from conversations.models import Conversation, Message, Project
from core.errors import NotFound
from tests.support import seed

pytestmark = pytest.mark.django_db


def test_appending_numbers_messages_and_keeps_counters(alice):
    conversation = services.create_conversation(user=alice, title="Plans")
    for i, tokens in enumerate([5, 7, 11]):
        seed.add_message(
            conversation_id=conversation.id,
            role="user" if i % 2 == 0 else "assistant",
            content=f"message {i}",
            tokens_used=tokens,
        )
    conversation.refresh_from_db()
    seqs = list(conversation.messages.values_list("sequence_number", flat=True))
    assert seqs == [1, 2, 3]
    assert conversation.message_count == 3
    assert conversation.total_tokens_used == 23
    assert conversation.last_message_at == conversation.messages.last().created_at


def test_archiving_records_when(alice):
    conversation = services.create_conversation(user=alice)
    services.archive_conversation(conversation=conversation)
    conversation.refresh_from_db()
    assert conversation.status == "archived"
    assert conversation.archived_at is not None


def test_someone_elses_project_cannot_be_attached(alice, bob):
    bobs = Project.objects.create(owner=bob, name="Secret")
    conversation = services.create_conversation(user=alice)
    with pytest.raises(NotFound):
        services.update_conversation(conversation=conversation, project=bobs.pk)
    conversation.refresh_from_db()
    assert conversation.project is None


def test_delete_cascades_to_messages(alice):
    conversation = services.create_conversation(user=alice)
    seed.add_message(conversation_id=conversation.id, role="user", content="hi")
    services.delete_conversation(conversation=conversation)
    assert not Conversation.objects.exists()
    assert not Message.objects.exists()


def test_other_users_conversation_is_not_found(alice, bob):
    conversation = services.create_conversation(user=alice)
    with pytest.raises(NotFound) as theirs:
        selectors.get_conversation_for_user(user=bob, conversation_id=conversation.id)
    with pytest.raises(NotFound) as missing:
        selectors.get_conversation_for_user(
            user=bob, conversation_id="00000000-0000-0000-0000-000000000000"
        )
    with pytest.raises(NotFound):
        selectors.get_conversation_for_user(user=bob, conversation_id="not-a-uuid")
    assert theirs.value.message == missing.value.message
    assert selectors.get_conversation_for_user(user=alice, conversation_id=str(conversation.id))


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_get_gap_free_numbers_and_exact_counters(alice, require_postgres):
    conversation = services.create_conversation(user=alice, title="Busy")
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def writer(worker: int) -> None:
        try:
            barrier.wait()
            for i in range(25):
                seed.add_message(
                    conversation_id=conversation.id,
                    role="user",
                    content=f"w{worker} m{i}",
                    tokens_used=worker + i,
                )
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    conversation.refresh_from_db()
    seqs = sorted(conversation.messages.values_list("sequence_number", flat=True))
    assert seqs == list(range(1, 201))
    assert conversation.message_count == 200
    expected_tokens = sum(w + i for w in range(8) for i in range(25))
    assert conversation.total_tokens_used == expected_tokens
    assert connection.vendor == "postgresql"
