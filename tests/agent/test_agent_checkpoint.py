"""Checkpointers: the thread survives restarts (TC-CB-009), keeps one checkpoint, starts
turns from the latest memory, a cut of it or a seed."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agent.checkpoint import (
    EMPTY_CHECKPOINT_ID,
    close_checkpointer,
    close_checkpointers,
    get_checkpointer,
    open_checkpointer,
)
from agent.threads import (
    FRESH,
    MemoryStart,
    delete_thread,
    read_thread,
    start_after,
    write_thread,
)
from tests.agent.helpers import new_id, run_one


def users_seen(server) -> list[str]:
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]


async def remembers_across_restart(url: str, config, server) -> None:
    thread = new_id()
    first = await open_checkpointer(url)
    await run_one(config, first, thread, "My name is Cheolsu.")
    await close_checkpointer(first)
    second = await open_checkpointer(url)  # a new saver object, as after a restart
    try:
        await run_one(config, second, thread, "What is my name?")
    finally:
        await close_checkpointer(second)
    assert users_seen(server) == ["My name is Cheolsu.", "What is my name?"]


async def test_same_thread_remembers_after_restart_on_sqlite(
    sqlite_path, online_config, fake_openai
):
    await remembers_across_restart(sqlite_path, online_config, fake_openai)


@pytest.mark.postgres
async def test_same_thread_remembers_after_restart_on_postgres(
    postgres_url, online_config, fake_openai
):
    await remembers_across_restart(postgres_url, online_config, fake_openai)


async def test_loop_cache_reopens_after_it_is_cleared(sqlite_path, online_config, fake_openai):
    thread = new_id()
    saver = await get_checkpointer(sqlite_path)
    assert await get_checkpointer(sqlite_path) is saver
    await run_one(online_config, saver, thread, "Remember the word pineapple.")
    await close_checkpointers()
    reopened = await get_checkpointer(sqlite_path)
    assert reopened is not saver
    await run_one(online_config, reopened, thread, "Which word?")
    await close_checkpointers()
    assert users_seen(fake_openai) == ["Remember the word pineapple.", "Which word?"]


async def test_offline_model_recalls_a_name_across_restart(sqlite_path, offline_config):
    """TC-CB-009 with the built-in model: the second answer refers to the first turn."""
    thread = new_id()
    saver = await open_checkpointer(sqlite_path)
    await run_one(offline_config, saver, thread, "내 이름은 철수야")
    await close_checkpointer(saver)
    saver = await open_checkpointer(sqlite_path)
    result = await run_one(offline_config, saver, thread, "내 이름이 뭐라고 했지?")
    await close_checkpointer(saver)
    assert "철수" in result.finished["content"]


async def checkpoints_of(saver, thread: str) -> int:
    return len([c async for c in saver.alist({"configurable": {"thread_id": thread}})])


async def checkpoint_rows(url: str, thread: str) -> dict[str, int]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        counts = {}
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cursor = await conn.execute(
                f"SELECT count(*) FROM {table} WHERE thread_id = %s",
                (thread,),
            )
            counts[table] = (await cursor.fetchone())[0]
        return counts


async def test_a_thread_keeps_one_checkpoint_however_many_turns(saver, online_config):
    thread = new_id()
    for n in range(12):
        await run_one(online_config, saver, thread, f"Message number {n}.")
    assert await checkpoints_of(saver, thread) == 1
    memory = await read_thread(saver, thread)
    assert memory["summaries"]  # past ten messages the window was folded: still one checkpoint
    assert memory["messages"][-2]["content"] == "Message number 11."


@pytest.mark.postgres
async def test_a_postgres_thread_keeps_one_checkpoint_and_only_its_blobs(
    postgres_url, online_config
):
    thread = new_id()
    saver = await open_checkpointer(postgres_url)
    try:
        for n in range(12):
            await run_one(online_config, saver, thread, f"Message number {n}.")
        rows = await checkpoint_rows(postgres_url, thread)
        memory = await read_thread(saver, thread)
    finally:
        await close_checkpointer(saver)
    assert rows["checkpoints"] == 1
    # One blob per channel the latest checkpoint references, no older versions.
    assert rows["checkpoint_blobs"] <= 12
    assert memory["summaries"] and memory["messages"][-2]["content"] == "Message number 11."


async def test_a_stopped_turn_is_recorded_and_pruned_too(saver, online_config, fake_openai):
    from tests.support.openai_replies import Reply

    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    fake_openai.enqueue(Reply(text="x" * 400, fail_after_chunks=3))
    result = await run_one(online_config, saver, thread, "tell me more")
    assert result.finished["finish_reason"] == "error"
    assert await checkpoints_of(saver, thread) == 1
    assert (await read_thread(saver, thread))["messages"][-2]["content"] == "tell me more"


async def test_start_after_the_latest_message_is_the_latest_checkpoint(saver, online_config):
    thread, reply_id = new_id(), new_id()
    result = await run_one(online_config, saver, thread, "My dog is Bori.", reply_id=reply_id)
    start = await start_after(saver, thread, reply_id)
    assert start == MemoryStart(result.finished["checkpoint_id"])


async def test_a_turn_from_a_cut_of_the_latest_memory_knows_nothing_said_after_it(
    saver, online_config, fake_openai
):
    thread, first_id = new_id(), new_id()
    await run_one(online_config, saver, thread, "My dog is Bori.", user_message_id=first_id)
    await run_one(online_config, saver, thread, "My password is hunter2")
    start = await start_after(saver, thread, first_id)
    assert start is not None and start.checkpoint_id == EMPTY_CHECKPOINT_ID
    await run_one(online_config, saver, thread, "What do you know?", start=start)
    assert users_seen(fake_openai) == ["My dog is Bori.", "What do you know?"]
    # The thread now holds the new branch only: the other one is rebuilt from the database.
    await run_one(online_config, saver, thread, "And now?")
    assert users_seen(fake_openai) == ["My dog is Bori.", "What do you know?", "And now?"]


async def test_a_message_the_latest_memory_does_not_hold_has_no_start(saver, online_config):
    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    assert await start_after(saver, thread, "nope") is None


async def test_a_turn_from_a_seed_remembers_its_summaries_and_messages(
    saver, online_config, fake_openai
):
    thread = new_id()
    await run_one(online_config, saver, thread, "Something else entirely.")
    seed = {
        "messages": [
            HumanMessage(id=new_id(), content="I live in Busan."),
            AIMessage(id=new_id(), content="Noted."),
        ],
        "summaries": ["The user's locker code is 4417."],
        "calibration": 1.0,
    }
    start = MemoryStart(EMPTY_CHECKPOINT_ID, seed)
    await run_one(online_config, saver, thread, "Where do I live?", start=start)
    sent = " ".join(str(m["content"]) for m in fake_openai.requests[-1]["messages"])
    assert "4417" in sent and "Busan" in sent and "Something else" not in sent
    memory = await read_thread(saver, thread)
    assert memory["summaries"] == ["The user's locker code is 4417."]


async def test_write_thread_replaces_what_a_thread_held(saver, online_config, fake_openai):
    thread = new_id()
    await run_one(online_config, saver, thread, "Later I moved to Jeju.")
    seed = {
        "messages": [HumanMessage(id=new_id(), content="I am Cheolsu.")],
        "summaries": [],
        "calibration": 1.0,
    }
    await write_thread(saver, thread, seed)
    await run_one(online_config, saver, thread, "Who am I?")
    assert users_seen(fake_openai) == ["I am Cheolsu.", "Who am I?"]


async def test_delete_thread_forgets_everything(saver, online_config):
    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    await delete_thread(saver, thread)
    assert await read_thread(saver, thread) is None


async def test_a_turn_from_the_empty_checkpoint_starts_a_new_root(
    saver, online_config, fake_openai
):
    thread = new_id()
    await run_one(online_config, saver, thread, "My dog is Bori.")
    await run_one(online_config, saver, thread, "Who am I?", start=FRESH)
    assert users_seen(fake_openai) == ["Who am I?"]
    memory = await read_thread(saver, thread)
    assert memory["messages"][0]["content"] == "Who am I?"
