"""`generate_image`: a picture from the model server's `/images/generations` (OpenAI,
LocalAI, ComfyUI and A1111 bridges speak it), handed back as the reply's image.

The picture travels as the tool's artifact (`{"images": [...]}`, as the Python sandbox's
do), so the reply keeps it as an attachment with the same checks as an upload, the page
shows it, and a vision model is sent it later like any image. The model reads one line
saying it was made, never the bytes.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, Literal

import openai
from langchain_core.tools import BaseTool, tool

from agent.steps import ToolFailed

logger = logging.getLogger(__name__)

PROMPT_MAX_CHARS = 4000
IMAGE_MAX_BYTES = 8 * 1024 * 1024
TIMEOUT_SECONDS = 180.0  # a CPU diffusion server takes minutes
PNG, JPEG, WEBP = b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"RIFF"


def _kind(data: bytes) -> str | None:
    if data.startswith(PNG):
        return "image/png"
    if data.startswith(JPEG):
        return "image/jpeg"
    if data.startswith(WEBP) and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def make_image_tool(*, base_url: str | None, api_key: str | None, model: str) -> BaseTool:
    """Return the `generate_image` tool drawing with `model` on that server."""
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=api_key or "none", timeout=TIMEOUT_SECONDS, max_retries=1
    )

    @tool("generate_image", response_format="content_and_artifact")
    async def generate_image(
        prompt: str, size: Literal["1024x1024", "1024x1536", "1536x1024"] = "1024x1024"
    ) -> tuple[str, dict[str, Any]]:
        """Draw a picture from a description and show it to the person: describe it fully
        (subject, style, colours, composition) in the prompt."""
        prompt = " ".join(prompt.split())[:PROMPT_MAX_CHARS]
        if not prompt:
            raise ToolFailed("image.failed", "Describe the picture in the prompt.")
        data = await _draw(client, model, prompt, size)
        kind = _kind(data)
        if kind is None or len(data) > IMAGE_MAX_BYTES:
            raise ToolFailed(
                "image.failed", "The image server sent something that is not a picture."
            )
        extension = kind.split("/")[1].replace("jpeg", "jpg")
        image = {
            "name": f"image.{extension}",
            "content_type": kind,
            "data_base64": base64.b64encode(data).decode("ascii"),
        }
        said = f"Made the picture ({size}) and showed it to the person: {prompt[:200]}"
        return said, {"images": [image], "generated": 1}

    generate_image.description = " ".join(generate_image.description.split())
    generate_image.metadata = {"timeout": TIMEOUT_SECONDS + 10}
    return generate_image


async def _draw(client: openai.AsyncOpenAI, model: str, prompt: str, size: str) -> bytes:
    """The picture's bytes; b64_json asked for, and asked again without when a server
    (gpt-image-1) refuses the parameter."""
    try:
        try:
            answer = await client.images.generate(
                model=model, prompt=prompt, size=size, n=1, response_format="b64_json"
            )
        except openai.BadRequestError as exc:
            if "response_format" not in str(exc):
                raise
            answer = await client.images.generate(model=model, prompt=prompt, size=size, n=1)
    except openai.NotFoundError as exc:
        raise ToolFailed(
            "image.unavailable",
            "This server cannot draw pictures: answer without one.",
        ) from exc
    except openai.APIError as exc:
        logger.warning("image generation failed: %s", exc)
        raise ToolFailed("image.failed", "The picture could not be made this time.") from exc
    item = answer.data[0] if answer.data else None
    encoded = getattr(item, "b64_json", None)
    if not encoded:
        raise ToolFailed("image.failed", "The image server sent no picture.")
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolFailed("image.failed", "The image server sent no picture.") from exc
