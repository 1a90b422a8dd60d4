"""A message staff delete from the moderation queue is gone from what the agent remembers:
the real agent, a fake OpenAI-compatible server; what the model is sent is the proof."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from audit.models import AuditEntry
from conversations import feedback, services
from conversations.models import Message
from tests.support.turns import ask

from .conftest import sent_to_model

pytestmark = pytest.mark.django_db(transaction=True)

QUEUE = "/admin/conversations/message/reports/"


def delete_in_the_queue(moderator, message_id) -> int:
    client = Client()
    client.force_login(moderator)
    assert str(message_id) in client.get(QUEUE).content.decode()
    return client.post(f"{QUEUE}{message_id}/delete/").status_code


async def test_a_message_deleted_from_the_queue_is_forgotten_by_the_agent(model, alice, make_user):
    moderator = await sync_to_async(make_user)("moderator", is_staff=True, is_superuser=True)
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    await ask(alice, conversation, content="My dog is called Bori.")
    reply, _ = await ask(alice, conversation, content="My card number is 4111-PURPLE-ZEBRA.")
    question = await Message.objects.aget(pk=reply.parent_id)
    await ask(alice, conversation, content="What do you know about me?")
    assert "PURPLE-ZEBRA" in sent_to_model(model)  # remembered until deleted

    await sync_to_async(feedback.report_message)(
        user=alice, message_id=question.pk, reason="I shared my card by mistake"
    )
    assert await sync_to_async(delete_in_the_queue)(moderator, question.pk) == 302

    await ask(alice, conversation, content="Tell me again what you know about me.")
    seen = sent_to_model(model)
    assert "PURPLE-ZEBRA" not in seen and "What do you know about me?" not in seen
    assert "Bori" in seen  # what came before it stays
    assert not await Message.objects.filter(content__contains="PURPLE-ZEBRA").aexists()
    entry = await AuditEntry.objects.aget()
    assert (entry.action, entry.actor_name, entry.target_id) == (
        "message.deleted",
        "moderator",
        str(question.pk),
    )
