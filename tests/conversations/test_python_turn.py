"""Sandboxed Python in a real turn: on when staff switch it on; the model reads what the
code printed, and code that runs forever is stopped with the reply going on."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from agent.tools.python_sandbox import sandbox_available
from conversations import services
from conversations.models import Attachment
from tests.agent.test_python_sandbox import FORK_AND_HOLD, tiny_png
from tests.conftest import require_service
from tests.support.turns import ask, calling, told

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(settings):
    require_service(sandbox_available(), "bubblewrap (apt-get install -y bubblewrap)")
    settings.CHAT_PYTHON_SANDBOX = True


async def new_conversation(alice):
    return await sync_to_async(services.create_conversation)(user=alice, title="Python")


async def test_the_model_reads_what_the_code_printed(model, alice, sandbox):
    model.responder = calling("python", {"code": "print(sum(range(10)) * 1001)"})
    reply, frames = await ask(alice, await new_conversation(alice), content="Compute it.")
    assert "45045" in told(model) and "45045" in reply.content
    steps = [f["content"] for f in frames if f["type"] == "thinking"]
    assert "Running Python code" in steps and "Ran Python code" in steps


async def test_an_image_the_code_saved_is_kept_with_the_reply(model, alice, sandbox):
    code = f"open('dot.png', 'wb').write({tiny_png()!r})\nprint('drawn')"
    model.responder = calling("python", {"code": code})
    conversation = await new_conversation(alice)
    reply, frames = await ask(alice, conversation, content="Draw a dot.")
    [image] = [a async for a in Attachment.objects.filter(message=reply)]
    assert (image.name, image.kind, image.content_type) == ("dot.png", "image", "image/png")
    assert image.file.read() == tiny_png()
    finished = next(f for f in frames if f["type"] == "generation.finished")
    assert [a["name"] for a in finished["message"]["attachments"]] == ["dot.png"]
    # The picture is not kept in the agent's memory (only its name is).
    assert "data_base64" not in json.dumps(reply.parts)


async def test_code_that_never_ends_is_stopped_and_the_reply_goes_on(model, alice, sandbox):
    model.responder = calling("python", {"code": "while True:\n    pass"})
    reply, _frames = await ask(alice, await new_conversation(alice), content="Loop.")
    assert reply.finish_reason == "end_turn"
    assert told(model).startswith("Stopped:")


async def test_children_asking_for_more_memory_than_the_run_has_are_told_no(model, alice, sandbox):
    model.responder = calling("python", {"code": FORK_AND_HOLD})
    reply, _frames = await ask(alice, await new_conversation(alice), content="Fork.")
    assert reply.finish_reason == "end_turn"
    held = int(told(model).split("held ")[1].split(",")[0])
    assert held * 400 <= 512  # the run's 512 MB, not 8 × 400 MB


async def test_python_is_not_offered_until_staff_switch_it_on(model, alice, settings):
    settings.CHAT_PYTHON_SANDBOX = False
    model.responder = calling("python", {"code": "print(1)"})
    reply, _frames = await ask(alice, await new_conversation(alice), content="Run it.")
    offered = {t["function"]["name"] for t in model.requests[0].get("tools") or []}
    assert "python" not in offered
    assert "unknown tool" in told(model)
    assert reply.finish_reason == "end_turn"
