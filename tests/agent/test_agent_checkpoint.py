"""Checkpointers: the thread survives restarts (TC-CB-009); copy, delete, branch points."""

from __future__ import annotations

import pytest

from agent.checkpoint import (
    EMPTY_CHECKPOINT_ID,
    branch_point,
    close_checkpointer,
    close_checkpointers,
    copy_thread,
    delete_thread,
    get_checkpointer,
    open_checkpointer,
    read_thread,
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


async def test_copy_thread_up_to_a_message_knows_nothing_later(saver, online_config, fake_openai):
    source, fork = new_id(), new_id()
    ids = []
    for n in range(8):
        user_id, reply_id = new_id(), new_id()
        text = "The secret code is 4417." if n == 1 else f"Filler message {n}."
        if n == 6:
            text = "Later I moved to Jeju."
        await run_one(
            online_config, saver, source, text, user_message_id=user_id, reply_id=reply_id
        )
        ids.append((user_id, reply_id))
    memory = await copy_thread(saver, source, fork, ids[4][1])
    assert memory["message_ids"][-1] == ids[4][1]
    everything = " ".join(memory["summaries"]) + " ".join(m["content"] for m in memory["messages"])
    assert "4417" in everything
    assert "Jeju" not in everything and "Filler message 5" not in everything
    await run_one(online_config, saver, fork, "What did I say?")
    sent = " ".join(m["content"] for m in fake_openai.requests[-1]["messages"] if m["content"])
    assert "Jeju" not in sent and "4417" in sent
    assert (await read_thread(saver, source))["message_ids"][-1] == ids[-1][1]


async def test_copy_thread_of_an_unknown_message_raises(saver, online_config):
    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    with pytest.raises(LookupError):
        await copy_thread(saver, thread, new_id(), "nope")


async def test_delete_thread_forgets_everything(saver, online_config):
    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    await delete_thread(saver, thread)
    assert await read_thread(saver, thread) is None


async def test_a_turn_from_a_branch_point_knows_nothing_said_after_it(
    saver, online_config, fake_openai
):
    thread, first_id, secret_id = new_id(), new_id(), new_id()
    await run_one(online_config, saver, thread, "My dog is Bori.", user_message_id=first_id)
    await run_one(online_config, saver, thread, "My password is hunter2", user_message_id=secret_id)
    base = await branch_point(saver, thread, first_id)
    await run_one(online_config, saver, thread, "What do you know?", base_checkpoint_id=base)
    assert users_seen(fake_openai) == ["My dog is Bori.", "What do you know?"]
    # The branch is kept: the other one goes on with everything it was told.
    await run_one(online_config, saver, thread, "And now?", base_checkpoint_id=None)
    assert users_seen(fake_openai) == ["My dog is Bori.", "What do you know?", "And now?"]


async def test_a_turn_from_the_empty_checkpoint_starts_a_new_root(
    saver, online_config, fake_openai
):
    thread = new_id()
    await run_one(online_config, saver, thread, "My dog is Bori.")
    result = await run_one(
        online_config, saver, thread, "Who am I?", base_checkpoint_id=EMPTY_CHECKPOINT_ID
    )
    assert users_seen(fake_openai) == ["Who am I?"]
    memory = await read_thread(saver, thread, result.finished["checkpoint_id"])
    assert memory["messages"][0]["content"] == "Who am I?"


async def test_a_branch_point_of_an_unknown_message_raises(saver, online_config):
    thread = new_id()
    await run_one(online_config, saver, thread, "hello")
    with pytest.raises(LookupError):
        await branch_point(saver, thread, "nope")
