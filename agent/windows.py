"""A model's context window, learned from its server once (SPEC "Model servers as they are").

Servers say it in different places: llama.cpp's `GET /props`
(`default_generation_settings.n_ctx`, the window each slot has), vLLM's `GET /v1/models`
(`max_model_len`; llama.cpp's own listing has `meta.n_ctx` in newer builds), Ollama's
`POST /api/show` (`num_ctx` among the model's parameters when its Modelfile sets one, else
Ollama's default of OLLAMA_DEFAULT_NUM_CTX; never the trained length it also reports, since
Ollama cuts any prompt past `num_ctx` without a word). A refusal that names the window
(agent/model_errors.py) is remembered here too. OpenAI, Azure and OpenRouter tell none of
this: CHAT_MODEL_CONTEXT / CHAT_CONTEXT_WINDOW stand for them, and win when set.

Each (server, model) is asked once per process; an answer that says nothing is asked again
after RETRY_SECONDS (the server may have been starting).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any

import httpx

logger = logging.getLogger(__name__)

ASK_TIMEOUT_SECONDS = 3.0
RETRY_SECONDS = 300.0
OLLAMA_DEFAULT_NUM_CTX = 4096  # what Ollama gives a model whose Modelfile sets no num_ctx
_NUM_CTX = re.compile(r"^num_ctx\s+(\d+)\s*$", re.MULTILINE)

Key = tuple[str, str]  # (base URL, model)
_learned: dict[Key, int] = {}
_asked: dict[Key, float] = {}  # when a server was last asked in vain
_locks: dict[Key, asyncio.Lock] = {}


def learned(base_url: str | None, model: str) -> int | None:
    """Return the window learned for this model on this server (None: not known)."""
    return _learned.get((base_url or "", model))


def remember(base_url: str | None, model: str, window: int) -> None:
    """Keep `window` as this model's (a refusal told it, or the server did)."""
    if window > 0:
        _learned[(base_url or "", model)] = window


def forget_windows() -> None:
    """Forget every learned window (tests)."""
    _learned.clear()
    _asked.clear()
    _locks.clear()


async def alearn(base_url: str | None, api_key: str | None, model: str) -> int | None:
    """Return this model's window, asking its server the first time; None if it says none."""
    key = (base_url or "", model)
    if key in _learned or not base_url:
        return _learned.get(key)
    if time.monotonic() - _asked.get(key, -RETRY_SECONDS) < RETRY_SECONDS:
        return None
    lock = _locks.setdefault(key, asyncio.Lock())
    async with lock:  # one question per model, however many replies start at once
        if key in _learned:
            return _learned[key]
        window = await _ask(base_url, api_key, model)
        if window is None:
            _asked[key] = time.monotonic()
            return None
        logger.info("%s at %s has a window of %d tokens", model, base_url, window)
        _learned[key] = window
        return window


async def _ask(base_url: str, api_key: str | None, model: str) -> int | None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    root = base_url.rstrip("/").removesuffix("/v1")
    async with httpx.AsyncClient(timeout=ASK_TIMEOUT_SECONDS, headers=headers) as client:
        for ask in (_llamacpp_props, _model_listing, _ollama_show):
            try:
                window = await ask(client, base_url.rstrip("/"), root, model)
            # Any answer that is not what that server says (a proxy's own JSON, a listing
            # without `data`) only means "not told": a reply never fails for it.
            except (httpx.HTTPError, ValueError, TypeError, AttributeError, LookupError) as exc:
                logger.debug("%s: no window from %s: %s", model, ask.__name__, exc)
                continue
            if isinstance(window, int) and window > 0:
                return window
    return None


async def _llamacpp_props(client: httpx.AsyncClient, base: str, root: str, model: str) -> Any:
    response = await client.get(f"{root}/props")
    response.raise_for_status()
    return response.json()["default_generation_settings"]["n_ctx"]


async def _model_listing(client: httpx.AsyncClient, base: str, root: str, model: str) -> Any:
    response = await client.get(f"{base}/models")
    response.raise_for_status()
    for card in response.json().get("data") or ():
        if isinstance(card, dict) and card.get("id") == model:
            meta = card.get("meta") if isinstance(card.get("meta"), dict) else {}
            return card.get("max_model_len") or meta.get("n_ctx")
    return None


async def _ollama_show(client: httpx.AsyncClient, base: str, root: str, model: str) -> Any:
    response = await client.post(f"{root}/api/show", json={"model": model})
    response.raise_for_status()
    body = response.json()
    if not isinstance(body.get("model_info"), dict):
        return None
    found = _NUM_CTX.search(str(body.get("parameters") or ""))
    return int(found.group(1)) if found else OLLAMA_DEFAULT_NUM_CTX
