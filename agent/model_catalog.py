"""The chat models users may pick: a fixed list, or the server's own (`GET /models`).

    catalog = Catalog(default="gpt-4o-mini", spec="auto", windows={"big": 200_000},
                      fallback_window=128_000, vision={"gpt-4o"}, base_url=..., api_key=...)
    catalog.models()          # [ModelInfo(id, default, context_window, vision, label), ...]
    catalog.find("gpt-4o")    # ModelInfo or None

`auto` asks the server once per `ttl` seconds; a server that does not answer leaves the
default model alone on the list until the next try (a shorter wait), so a picker never
empties and a conversation never loses its model to a hiccup.

With no API key the built-in offline model answers every message, so it is the one model
on offer (id "offline", labelled `offline_label`), whatever CHAT_MODEL and CHAT_MODELS say.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import httpx

from agent import windows as learned_windows
from agent.offline import OFFLINE_MODEL_NAME

logger = logging.getLogger(__name__)

AUTO = "auto"
MODEL_ID_MAX_CHARS = 100
LIST_TTL_SECONDS = 300.0
RETRY_SECONDS = 30.0
FETCH_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class ModelInfo:
    """One model users may pick."""

    id: str
    default: bool
    context_window: int
    vision: bool
    label: str = ""  # what people read (English; translated where shown); "" = the id

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.id)


def parse_model_ids(value: str) -> list[str]:
    """Return the ids of a comma-separated list, in order, each once."""
    ids: list[str] = []
    for item in value.split(","):
        item = item.strip()
        if item and item not in ids:
            ids.append(item)
    return ids


def parse_context_windows(value: str) -> dict[str, int]:
    """Return {model id: tokens} from "id=tokens,..."; raise ValueError on a bad entry."""
    windows: dict[str, int] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        model, sep, tokens = item.rpartition("=")
        if not sep or not model.strip() or not tokens.strip().isdigit() or int(tokens) <= 0:
            raise ValueError(f"CHAT_MODEL_CONTEXT: expected id=tokens, got {item.strip()!r}")
        windows[model.strip()] = int(tokens)
    return windows


def fetch_model_ids(base_url: str, api_key: str | None) -> list[str]:
    """Return the model ids an OpenAI-compatible server lists at `GET /models`."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = httpx.get(
        base_url.rstrip("/") + "/models", headers=headers, timeout=FETCH_TIMEOUT_SECONDS
    )
    response.raise_for_status()
    data = response.json().get("data") or []
    ids = [str(item.get("id", "")) for item in data if isinstance(item, dict)]
    return [i for i in ids if 0 < len(i) <= MODEL_ID_MAX_CHARS and i.isprintable()]


@dataclass
class Catalog:
    """The models on offer; thread-safe, and asks the server at most once per `ttl`."""

    default: str
    spec: str = ""
    windows: dict[str, int] = field(default_factory=dict)
    fallback_window: int = 128_000
    vision: frozenset[str] = frozenset()
    base_url: str | None = None
    api_key: str | None = None
    offline_label: str = "Built-in offline model"
    ttl: float = LIST_TTL_SECONDS
    _fetched: list[str] | None = field(default=None, repr=False)
    _expires: float = field(default=0.0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def offline(self) -> bool:
        """Say whether the built-in offline model answers (no API key: agent.config)."""
        return not self.api_key

    def default_id(self) -> str:
        """Return the id of the model that answers when nobody chose one."""
        return OFFLINE_MODEL_NAME if self.offline else self.default

    def ids(self) -> list[str]:
        """Return the ids on offer, the default first."""
        if self.offline:
            return [OFFLINE_MODEL_NAME]
        if self.spec.strip().lower() == AUTO:
            listed = self._server_ids()
        else:
            listed = parse_model_ids(self.spec)
        return [self.default, *(i for i in listed if i != self.default)]

    def models(self) -> list[ModelInfo]:
        """Return every model on offer, the default first."""
        return [self.info(i) for i in self.ids()]

    def info(self, model_id: str) -> ModelInfo:
        """Return what is known of `model_id` (whether or not it is on offer)."""
        offline = self.offline and model_id == OFFLINE_MODEL_NAME
        return ModelInfo(
            id=model_id,
            default=model_id == self.default_id(),
            # CHAT_MODEL_CONTEXT first, then what the server told (agent/windows.py).
            context_window=self.windows.get(model_id)
            or learned_windows.learned(self.base_url, model_id)
            or self.fallback_window,
            vision=model_id in self.vision,
            label=self.offline_label if offline else model_id,
        )

    def find(self, model_id: str) -> ModelInfo | None:
        """Return the model `model_id` if it is on offer."""
        return self.info(model_id) if model_id in self.ids() else None

    def fresh(self) -> bool:
        """Say whether `ids()` answers without asking the server (no network wait)."""
        return self.offline or self.spec.strip().lower() != AUTO or time.monotonic() < self._expires

    def _server_ids(self) -> list[str]:
        if not self.base_url or not self.api_key:
            return []  # the offline model: nothing to ask
        with self._lock:
            if self._fetched is not None and time.monotonic() < self._expires:
                return self._fetched
            try:
                self._fetched = fetch_model_ids(self.base_url, self.api_key)
                self._expires = time.monotonic() + self.ttl
            except (httpx.HTTPError, ValueError) as exc:
                logger.warning("could not list the server's models: %s", exc)
                self._fetched = []
                self._expires = time.monotonic() + min(self.ttl, RETRY_SECONDS)
            return self._fetched
