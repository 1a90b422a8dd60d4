"""Migrations on existing data: 0003 (counters from the data, running replies as runs) and
0004 (each conversation one branch)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def as_tables_owner():
    """Migrations run as the tables' owner (`manage.py migrate` does the same)."""
    from core import rls

    with rls.owner_mode():
        yield


BEFORE = [("conversations", "0002_search")]
AFTER = [("conversations", "0003_reply_runs")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_reply_runs_migration_keeps_numbers_and_turns_slots_into_runs(alice):
    try:
        apps = _migrate(BEFORE)
        Conversation = apps.get_model("conversations", "Conversation")
        Message = apps.get_model("conversations", "Message")
        Conversation.objects.create(created_by_id=alice.pk, title="empty")
        gappy = Conversation.objects.create(created_by_id=alice.pk, title="gappy")
        for seq in (1, 2, 5):
            Message.objects.create(
                conversation=gappy, role="user", content="x", sequence_number=seq
            )
        dead_run, stored_run = uuid.uuid4(), uuid.uuid4()
        busy = Conversation.objects.create(
            created_by_id=alice.pk,
            title="busy",
            active_run_id=dead_run,
            active_run_heartbeat=timezone.now() - timedelta(minutes=1),
        )
        Message.objects.create(conversation=busy, role="user", content="q", sequence_number=1)
        done = Conversation.objects.create(
            created_by_id=alice.pk, title="done", active_run_id=stored_run
        )
        Message.objects.create(conversation=done, role="user", content="q", sequence_number=1)
        Message.objects.create(
            id=stored_run, conversation=done, role="assistant", content="a", sequence_number=2
        )

        apps = _migrate(AFTER)
        Conversation = apps.get_model("conversations", "Conversation")
        Message = apps.get_model("conversations", "Message")
        ReplyRun = apps.get_model("conversations", "ReplyRun")
        counters = dict(Conversation.objects.values_list("title", "last_sequence_number"))
        assert counters == {"empty": 0, "gappy": 5, "busy": 1, "done": 2}
        seqs = list(
            Message.objects.filter(conversation_id=gappy.pk)
            .values_list("sequence_number", flat=True)
            .order_by("sequence_number")
        )
        assert seqs == [1, 2, 5]  # nothing renumbered
        runs = {r.pk: r for r in ReplyRun.objects.all()}
        assert runs[dead_run].status == "running" and runs[dead_run].reply_to.content == "q"
        assert runs[stored_run].status == "finished"
    finally:
        _migrate(_latest())


def test_branches_migration_makes_each_conversation_one_branch(alice):
    try:
        apps = _migrate(AFTER)
        Conversation = apps.get_model("conversations", "Conversation")
        Message = apps.get_model("conversations", "Message")
        empty = Conversation.objects.create(created_by_id=alice.pk, title="empty")
        gappy = Conversation.objects.create(created_by_id=alice.pk, title="gappy")
        ids = [
            Message.objects.create(
                conversation=gappy, role="user", content=str(seq), sequence_number=seq
            ).pk
            for seq in (1, 2, 5)
        ]
        apps = _migrate([("conversations", "0004_branches")])
        Conversation = apps.get_model("conversations", "Conversation")
        Message = apps.get_model("conversations", "Message")
        parents = dict(Message.objects.values_list("pk", "parent_id"))
        assert parents == {ids[0]: None, ids[1]: ids[0], ids[2]: ids[1]}
        assert Conversation.objects.get(pk=gappy.pk).current_message_id == ids[2]
        assert Conversation.objects.get(pk=empty.pk).current_message_id is None
    finally:
        _migrate(_latest())
