"""Pictures in a real turn (SPEC: CHAT_IMAGE_MODEL, tool id `image`): the model calls
`generate_image`, the server's /images/generations draws, the picture is kept as the
reply's image and counted against the budget; a server without it, or one that refuses
b64_json, is met as it is."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from PIL import Image

from conversations import services
from conversations.models import Attachment
from tests.support.turns import ask, calling, told
from usage.services import reply_tokens

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def images_on(settings):
    settings.CHAT_IMAGE_MODEL = "gpt-image-1"
    settings.CHAT_IMAGE_TOKENS = 1056


async def new_conversation(alice):
    return await sync_to_async(services.create_conversation)(user=alice, title="Pictures")


async def test_a_drawn_picture_is_kept_shown_and_counted(model, alice, images_on):
    model.responder = calling(
        "generate_image", {"prompt": "A lighthouse at dusk", "size": "1536x1024"}
    )
    reply, frames = await ask(alice, await new_conversation(alice), content="Draw a lighthouse.")
    [sent] = model.images.requests
    assert sent["model"] == "gpt-image-1" and sent["prompt"] == "A lighthouse at dusk"
    assert sent["size"] == "1536x1024" and sent["response_format"] == "b64_json"
    [image] = [a async for a in Attachment.objects.filter(message=reply)]
    assert (image.kind, image.content_type) == ("image", "image/png")
    with Image.open(image.file) as picture:  # a real picture, its shape kept
        assert picture.size == (96, 64)
    finished = next(f for f in frames if f["type"] == "generation.finished")
    assert [a["kind"] for a in finished["message"]["attachments"]] == ["image"]
    steps = [f["content"] for f in frames if f["type"] == "thinking"]
    assert "Drawing a picture" in steps and "Drew a picture" in steps
    assert told(model).startswith("Made the picture (1536x1024)")
    kept = json.dumps(reply.parts)
    assert "b64_json" not in kept and "data_base64" not in kept  # the bytes are the file
    _input, output = reply_tokens(reply.metadata)
    assert reply.metadata["usage"]["image_tokens"] == 1056
    assert output >= 1056 and reply.tokens_used >= 1056  # budgets see the picture


async def test_gpt_image_1_refusing_response_format_is_asked_again_without(model, alice, images_on):
    model.images.refuses_response_format = True
    model.responder = calling("generate_image", {"prompt": "A cat"})
    reply, _frames = await ask(alice, await new_conversation(alice), content="Draw a cat.")
    assert [("response_format" in r) for r in model.images.requests] == [True, False]
    assert await Attachment.objects.filter(message=reply).acount() == 1


async def test_a_server_that_cannot_draw_says_so_and_the_reply_goes_on(model, alice, images_on):
    model.images.enabled = False
    model.responder = calling("generate_image", {"prompt": "A cat"})
    reply, frames = await ask(alice, await new_conversation(alice), content="Draw a cat.")
    assert reply.finish_reason == "end_turn"
    assert "cannot draw pictures" in told(model)
    steps = [f["content"] for f in frames if f["type"] == "thinking"]
    assert "The model server cannot draw pictures" in steps
    assert await Attachment.objects.filter(message=reply).acount() == 0
    assert "image_tokens" not in reply.metadata["usage"]


async def test_no_image_model_no_tool(model, alice, settings):
    settings.CHAT_IMAGE_MODEL = ""
    model.responder = calling("generate_image", {"prompt": "A cat"})
    await ask(alice, await new_conversation(alice), content="Draw a cat.")
    offered = {t["function"]["name"] for t in model.requests[0].get("tools") or []}
    assert "generate_image" not in offered
    assert model.images.requests == []
