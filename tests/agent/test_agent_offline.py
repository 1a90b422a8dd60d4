"""The built-in offline model: greets, calculates, tells the time, recalls, says it is offline."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from agent import prompts
from agent.offline import OfflineChatModel, compose_reply
from tests.agent.helpers import new_id, run_one


async def test_offline_model_greets_and_says_how_to_configure(offline_config, saver):
    result = await run_one(offline_config, saver, new_id(), "안녕하세요")
    assert result.finished["content"].startswith("안녕하세요!")
    assert "OPENAI_API_KEY" in result.finished["content"]
    assert result.finished["model"] == "offline"
    assert len(result.of_type("token")) > 3  # it streams


async def test_offline_model_calculates_with_the_tool(offline_config, saver):
    result = await run_one(offline_config, saver, new_id(), "123 * 456 계산해줘")
    assert "56088" in result.finished["content"]
    [call] = result.steps("tool_call")
    assert call["code"] == "tool.calculator.call" and call["content"] == "Using the calculator"
    assert call["params"]["args"] == {"expression": "123 * 456"}


async def test_offline_model_tells_the_time(offline_config, saver):
    result = await run_one(offline_config, saver, new_id(), "What time is it?")
    assert result.codes("tool_call") == ["tool.get_current_datetime.call"]
    assert result.finished["content"].startswith("It is now")


async def test_offline_model_recalls_from_recent_messages_and_summaries(offline_config, saver):
    thread = new_id()
    await run_one(offline_config, saver, thread, "The project deadline is March 15.")
    for n in range(6):
        await run_one(offline_config, saver, thread, f"Some other topic number {n}.")
    result = await run_one(offline_config, saver, thread, "What did I tell you about the deadline?")
    assert "March 15" in result.finished["content"]


def test_offline_model_is_deterministic():
    messages = [SystemMessage("x"), HumanMessage("hello")]
    assert compose_reply(messages).content == compose_reply(messages).content


def test_offline_summarizer_keeps_user_statements():
    system = prompts.SUMMARIZE_SYSTEM.format(language_name="English", max_words=50)
    request = prompts.SUMMARIZE_REQUEST.format(
        transcript="User: My dog is called Bori.\nAssistant: Nice!\nUser: Is it late?"
    )
    reply = compose_reply([SystemMessage(system), HumanMessage(request)])
    assert "Bori" in reply.content and "late" not in reply.content


async def test_offline_model_streams_at_its_pace():
    import time

    model = OfflineChatModel(chars_per_second=2000)
    started = time.monotonic()
    chunks = [c async for c in model.astream([HumanMessage("hello")])]
    assert len(chunks) > 5
    assert time.monotonic() - started >= 0.03


def _tools(*names: str) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


def test_offline_model_saves_the_fact_it_was_asked_to_remember():
    for said, fact in [
        ("My name is Chulsoo. Remember that my dog's name is Bori.", "my dog's name is Bori"),
        ("내 이름은 철수야. 우리 강아지 이름이 보리라는 걸 기억해 줘", "우리 강아지 이름이 보리"),
        ("Remember that my dog's name is Bori", "my dog's name is Bori"),
    ]:
        reply = compose_reply([HumanMessage(said)], _tools("remember"))
        assert reply.tool_calls[0]["name"] == "remember"
        assert reply.tool_calls[0]["args"] == {"fact": fact}


def test_offline_model_never_answers_with_its_own_instructions():
    system = "\n\n".join(
        [
            "You are a helpful assistant.",
            prompts.MEMORY_NOTE,  # mentions names, family, where they live
            prompts.MEMORIES_INTRO["en"] + "\n- My dog's name is Bori.",
        ]
    )
    reply = compose_reply([SystemMessage(system), HumanMessage("What is my dog's name?")])
    assert reply.content == "You told me: “My dog's name is Bori.”"
    # With no memory of it, it does not quote the instructions either.
    bare = "\n\n".join(["You are a helpful assistant.", prompts.MEMORY_NOTE])
    reply = compose_reply([SystemMessage(bare), HumanMessage("What did I say about my name?")])
    assert "remember" not in reply.content and "lasting facts" not in reply.content
