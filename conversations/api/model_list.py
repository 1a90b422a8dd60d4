"""`GET /models`: the chat models users may pick."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from ninja import Router, Schema

from core.models_on_offer import list_models
from core.schemas import errors

router = Router(tags=["models"])
ERRORS = errors(401, 429)


class ModelOut(Schema):
    id: str
    default: bool
    context_window: int
    vision: bool
    label: str  # for people, in English ("Built-in offline model" for "offline"; else the id)


class ModelList(Schema):
    items: list[ModelOut]


@router.get("/models", response={200: ModelList, **ERRORS})
async def get_models(request: HttpRequest):
    """List the models users may pick, the default first (CHAT_MODELS; `auto` asks the
    model server, cached for five minutes). Without an API key: the built-in offline model
    alone (id `offline`)."""
    models = await sync_to_async(list_models, thread_sensitive=False)()
    return {"items": [vars(m) for m in models]}
