"""Settings the agent needs, passed in by the caller (the agent never reads Django)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """Everything that tunes one agent turn; built by `conversations.replies.turns`."""

    model: str = "gpt-4o-mini"
    temperature: float | None = None  # None: the server's default
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    context_window: int = 128_000
    compression_threshold: float = 0.7
    compression_target: float = 0.1
    memory_max_messages: int = 10
    memory_keep_recent: int = 5
    memory_max_summaries: int = 3
    max_iterations: int = 4
    memory_recall_k: int = 5  # memories across conversations put into each turn
    recall_max_tokens: int = 600  # older messages recalled verbatim, at most this many tokens
    # On summary-window overflow: "merge" the two oldest (ours) or "drop" the oldest (seed 001).
    summary_overflow: Literal["merge", "drop"] = "merge"
    # Pace of the offline model's stream, so a person can watch it type.
    offline_chars_per_second: float = 400.0
    vision: bool = False  # the model takes images (CHAT_VISION_MODELS)
    request_timeout: float = 60.0
    max_retries: int = 2
    # A silent model server is given up on sooner than request_timeout × retries: no first
    # byte within this many seconds (CHAT_MODEL_FIRST_BYTE_TIMEOUT), or nothing more for
    # this many mid-stream (CHAT_MODEL_IDLE_TIMEOUT).
    first_byte_timeout: float | None = 300.0
    idle_timeout: float | None = 30.0

    @property
    def offline(self) -> bool:
        """Say whether the built-in offline model answers instead of a real one."""
        return not self.openai_api_key
