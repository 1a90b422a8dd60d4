"""`manage.py prune_checkpoints` keeps the latest checkpoint of each thread written before
turns pruned their own, drops threads of deleted conversations, and can be run again."""

from __future__ import annotations

import io
import re
import uuid

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings as django_settings
from django.core.management import call_command
from langchain_core.messages import AIMessage, HumanMessage

from agent import checkpoint, threads
from agent.graph import get_graph, thread_config
from conversations import services

pytestmark = pytest.mark.django_db(transaction=True)


async def write_unpruned_thread(thread_id: str, turns: int) -> None:
    """Write a thread the way turns did before pruning: a checkpoint per turn, all kept."""
    saver = await checkpoint.open_checkpointer(django_settings.CHECKPOINT_URL)
    try:
        graph = get_graph(saver)
        for turn in range(turns):
            said = HumanMessage(id=str(uuid.uuid4()), content=f"My note {turn}: kw{turn}q.")
            answer = AIMessage(id=str(uuid.uuid4()), content=f"Noted {turn}.")
            await graph.aupdate_state(
                thread_config(thread_id), {"messages": [said, answer]}, as_node="agent"
            )
    finally:
        await checkpoint.close_checkpointer(saver)


async def thread_state(thread_id: str) -> tuple[int, threads.ThreadMemory | None]:
    saver = await checkpoint.open_checkpointer(django_settings.CHECKPOINT_URL)
    try:
        config = {"configurable": {"thread_id": thread_id}}
        count = len([c async for c in saver.alist(config)])
        return count, await threads.read_thread(saver, thread_id)
    finally:
        await checkpoint.close_checkpointer(saver)


def run_command() -> str:
    out = io.StringIO()
    call_command("prune_checkpoints", "--batch", "1", stdout=out)
    return out.getvalue()


def test_old_threads_keep_their_latest_memory_and_orphans_go(alice, settings, tmp_path):
    if not settings.CHECKPOINT_URL.startswith("postgres"):  # a file of this test's own
        settings.CHECKPOINT_URL = str(tmp_path / "checkpoints.sqlite3")
    conversation = services.create_conversation(user=alice)
    kept, orphan = str(conversation.pk), str(uuid.uuid4())
    async_to_sync(write_unpruned_thread)(kept, 8)
    async_to_sync(write_unpruned_thread)(orphan, 3)  # its conversation is gone
    count, memory_before = async_to_sync(thread_state)(kept)
    assert count == 8

    out = run_command()

    # Threads of conversations other tests deleted are orphans too: at least this one.
    assert re.search(r"1 thread\(s\) to prune, [1-9]\d* of deleted conversations", out), out
    assert "pruned 1/1 thread(s)" in out and " -> " in out
    count, memory_after = async_to_sync(thread_state)(kept)
    assert count == 1 and memory_after == memory_before  # the memory itself is untouched
    assert memory_after["messages"][-2]["content"] == "My note 7: kw7q."
    assert async_to_sync(thread_state)(orphan) == (0, None)
    # Run again: nothing left to do, and it says so.
    assert "0 thread(s) to prune, 0 of deleted conversations" in run_command()


async def _rows(thread_id: str) -> dict[str, int]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(django_settings.CHECKPOINT_URL) as conn:
        counts = {}
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cursor = await conn.execute(
                f"SELECT count(*) FROM {table} WHERE thread_id = %s", (thread_id,)
            )
            counts[table] = (await cursor.fetchone())[0]
        cursor = await conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s"
            " AND parent_checkpoint_id IS NOT NULL",
            (thread_id,),
        )
        counts["with_parent"] = (await cursor.fetchone())[0]
        return counts


async def _prune_both(ours: str, stock: str) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    saver = await checkpoint.open_checkpointer(django_settings.CHECKPOINT_URL)
    try:
        await saver.aprune([ours])
        await AsyncPostgresSaver.aprune(saver, [stock])  # the library's own keep_latest
    finally:
        await checkpoint.close_checkpointer(saver)


def test_a_turns_prune_leaves_what_the_librarys_leaves(alice, require_postgres):
    """The one-statement prune (agent/checkpoint.py) keeps exactly the rows LangGraph's
    own keep_latest keeps: the latest checkpoint, the blobs it uses, no writes before it."""
    ours, stock = str(uuid.uuid4()), str(uuid.uuid4())
    for thread_id in (ours, stock):
        async_to_sync(write_unpruned_thread)(thread_id, 6)
    before = async_to_sync(_rows)(ours)
    assert before["checkpoints"] == 6 and before["checkpoint_blobs"] > 2
    memory_before = async_to_sync(thread_state)(ours)[1]

    async_to_sync(_prune_both)(ours, stock)

    after = async_to_sync(_rows)(ours)
    assert after == async_to_sync(_rows)(stock)
    assert after["checkpoints"] == 1 and after["with_parent"] == 0
    assert after["checkpoint_blobs"] < before["checkpoint_blobs"]  # it did delete some
    assert async_to_sync(thread_state)(ours) == (1, memory_before)
    async_to_sync(_prune_both)(ours, stock)  # again: nothing more goes
    assert async_to_sync(_rows)(ours) == after


def test_a_side_by_side_thread_is_kept_while_its_run_runs_and_dropped_after(
    alice, settings, tmp_path
):
    from django.utils import timezone

    from conversations.models import Message, ReplyRun

    if not settings.CHECKPOINT_URL.startswith("postgres"):
        settings.CHECKPOINT_URL = str(tmp_path / "checkpoints.sqlite3")
    conversation = services.create_conversation(user=alice)
    question = services.insert_message(
        conversation, services.NewMessage(role=Message.Role.USER, content="Compare", tokens_used=1)
    )
    running, ended = uuid.uuid4(), uuid.uuid4()
    for run_id, status in ((running, "running"), (ended, "finished")):
        ReplyRun.objects.create(
            id=run_id,
            conversation=conversation,
            reply_to=question,
            lane=1 if status == "running" else 0,
            status=status,
            heartbeat_at=timezone.now(),
        )
    live, left = (f"{conversation.pk}/side/{run}" for run in (running, ended))
    async_to_sync(write_unpruned_thread)(live, 2)
    async_to_sync(write_unpruned_thread)(left, 2)  # its process died before dropping it
    out = run_command()
    assert "Traceback" not in out
    assert async_to_sync(thread_state)(left) == (0, None)
    assert async_to_sync(thread_state)(live)[1] is not None
