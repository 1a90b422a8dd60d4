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
