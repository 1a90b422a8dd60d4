"""The models on offer, from Django's settings (SPEC: Models and instructions).

Every app asks here: the API's `GET /models`, the checks on a conversation's `model` and a
user's `default_model`, and the agent's settings for a turn (its model's context window).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils.translation import gettext, gettext_noop

from agent import windows
from agent.model_catalog import Catalog, ModelInfo, parse_context_windows

from .errors import Invalid

# The offline model as people read it (in English here: translated where it is shown).
OFFLINE_LABEL = gettext_noop("Built-in offline model")

__all__ = [
    "ModelInfo",
    "acheck_model",
    "amodel_in_force",
    "check_model",
    "find_model",
    "list_models",
    "model_in_force",
]


@lru_cache(maxsize=8)
def _catalog(
    default: str,
    spec: str,
    windows: str,
    fallback: int,
    vision: tuple[str, ...],
    base_url: str | None,
    api_key: str | None,
) -> Catalog:
    # One per combination of settings: a test's override gets its own, and so its own cache.
    return Catalog(
        default=default,
        spec=spec,
        windows=parse_context_windows(windows),
        fallback_window=fallback,
        vision=frozenset(vision),
        base_url=base_url,
        api_key=api_key,
        offline_label=OFFLINE_LABEL,
    )


def get_catalog() -> Catalog:
    """Return the catalog the current settings describe."""
    return _catalog(
        settings.CHAT_MODEL,
        settings.CHAT_MODELS,
        settings.CHAT_MODEL_CONTEXT,
        int(settings.CHAT_CONTEXT_WINDOW),
        tuple(settings.CHAT_VISION_MODELS),
        settings.OPENAI_BASE_URL,
        settings.OPENAI_API_KEY,
    )


def list_models() -> list[ModelInfo]:
    """Return the models users may pick, the default first, labelled in the active language."""
    models = get_catalog().models()
    # Only a label of our own is words to translate; a model's id is its name.
    return [m if m.label == m.id else replace(m, label=gettext(m.label)) for m in models]


def find_model(model_id: str) -> ModelInfo | None:
    """Return the model `model_id` if users may pick it."""
    return get_catalog().find(model_id)


def check_model(model_id: str) -> str:
    """Return `model_id` if users may pick it ("" = the default); else raise Invalid."""
    if model_id and get_catalog().find(model_id) is None:
        raise Invalid(
            gettext("Unknown model %(model)s: GET /api/v1/models lists the models.")
            % {"model": repr(model_id)}
        )
    return model_id


acheck_model = sync_to_async(check_model, thread_sensitive=False)


def model_in_force(*choices: str | None) -> ModelInfo:
    """Return the first of `choices` still on offer (a conversation's model, then the
    user's default), else the site's default model."""
    catalog = get_catalog()
    for choice in choices:
        if choice:
            found = catalog.find(choice)
            if found is not None:
                return found
    return catalog.info(catalog.default_id())


async def amodel_in_force(*choices: str | None) -> ModelInfo:
    """Return the model in force (async twin: off the loop only when the server is asked),
    with its window as its server tells it, the first time asked (agent/windows.py)."""
    catalog = get_catalog()
    if catalog.fresh():
        info = model_in_force(*choices)
    else:
        info = await sync_to_async(model_in_force, thread_sensitive=False)(*choices)
    if catalog.offline or info.id in catalog.windows:  # CHAT_MODEL_CONTEXT wins
        return info
    window = await windows.alearn(catalog.base_url, catalog.api_key, info.id)
    return replace(info, context_window=window) if window else info
