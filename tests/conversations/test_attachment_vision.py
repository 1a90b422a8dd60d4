"""Images sent with a message reach a vision model as image parts; a model without vision
is told it cannot see them. The real agent, a fake OpenAI-compatible server."""

from __future__ import annotations

import io
import json

import pytest
from asgiref.sync import sync_to_async
from PIL import Image

from conversations import attachments, services
from tests.agent.helpers import is_summarizer_request
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import forced_tool
from tests.support.turns import ask

pytestmark = pytest.mark.django_db(transaction=True)


def big_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3000, 2000), (10, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def last_user_content(server: FakeOpenAI):
    main = [b for b in server.requests if not forced_tool(b) and not is_summarizer_request(b)]
    return [m for m in main[-1]["messages"] if m["role"] == "user"][-1]["content"]


async def setup(alice):
    conversation = await sync_to_async(services.create_conversation)(user=alice)
    image = await sync_to_async(attachments.upload)(
        user=alice, conversation_id=conversation.id, name="chart.png", data=big_png()
    )
    return conversation, image


async def test_a_vision_model_gets_the_image_resized(model, alice, settings):
    settings.CHAT_VISION_MODELS = [settings.CHAT_MODEL]
    conversation, image = await setup(alice)
    await ask(alice, conversation, content="What colour is this?", attachments=[str(image.id)])
    content = last_user_content(model)
    assert content[0] == {"type": "text", "text": "What colour is this?"}
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    import base64

    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as seen:
        assert max(seen.size) == 1568  # resized down, proportions kept
        assert seen.size == (1568, 1045)
    # The next turn's memory holds the text, not the image.
    await ask(alice, conversation, content="And now?")
    assert "base64" not in json.dumps(last_user_content(model))


async def test_a_model_without_vision_is_told_it_cannot_see(model, alice, settings):
    settings.CHAT_VISION_MODELS = []
    conversation, image = await setup(alice)
    await ask(alice, conversation, content="What is in the picture?", attachments=[str(image.id)])
    content = json.dumps(last_user_content(model), ensure_ascii=False)
    assert "image_url" not in content
    assert "chart.png" in content and "cannot see" in content
