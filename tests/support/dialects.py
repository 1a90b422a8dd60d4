"""How each real model server differs on the wire, for the fake server (tests/support).

Taken from the servers' source (llama.cpp `tools/server`, llama-cpp-python
`llama_cpp/server`, vLLM `entrypoints/openai`, Ollama `openai/openai.go`) and from recorded
OpenAI and OpenRouter responses: where a server puts a model's reasoning in a stream delta,
what it answers a prompt longer than its window, how its error bodies look, and where it
tells its window (llama.cpp `GET /props`, vLLM `max_model_len` in `GET /v1/models`, Ollama
`POST /api/show`). `Dialect.think` writes reasoning inline as `<think>…</think>`, as a
Qwen3 or DeepSeek-R1 model served without a reasoning parser does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Body = tuple[int, bytes]  # status, body


@dataclass(frozen=True)
class Dialect:
    name: str
    reasoning_field: str | None  # None: the model's reasoning is inline (`<think>`) or absent
    think_inline: bool = False

    # --- a stream's deltas -------------------------------------------------------------
    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        if self.name == "openrouter":  # the same text twice (reasoning_details)
            detail = {"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}
            return {
                "content": "",
                "role": "assistant",
                "reasoning": piece,
                "reasoning_details": [detail],
            }
        if self.name == "ollama":
            return {"content": "", "reasoning": piece}
        if self.name == "deepseek":
            return {"content": None, "reasoning_content": piece}
        assert self.reasoning_field is not None
        return {self.reasoning_field: piece}

    # --- errors ------------------------------------------------------------------------
    def error(self, status: int, message: str, **fields: Any) -> Body:
        """Return an error body as this server writes it (`type`, `param`, `code` where it
        sends them)."""
        if self.name in ("llamacpp", "think"):
            error = {
                "code": status,
                "message": message,
                "type": fields.get("type", _TYPES.get(status, "server_error")),
            }
            error.update({k: v for k, v in fields.items() if k not in ("type", "param", "code")})
            return status, _dumps({"error": error})
        if self.name.startswith("vllm"):
            error = {
                "message": message,
                "type": fields.get("type", _VLLM_TYPES.get(status, "InternalServerError")),
                "param": fields.get("param"),
                "code": status,
            }
            return status, _dumps({"error": error})
        if self.name == "ollama":
            error = {
                "message": message,
                "type": {400: "invalid_request_error", 404: "not_found_error"}.get(
                    status, "api_error"
                ),
                "param": None,
                "code": None,
            }
            return status, _dumps({"error": error}) + b"\n"
        error = {
            "message": message,
            "type": fields.get("type", "invalid_request_error" if status < 500 else "server_error"),
            "param": fields.get("param"),
            "code": fields.get("code"),
        }
        return status, _dumps({"error": error})

    def context_error(self, prompt_tokens: int, window: int, max_tokens: int | None) -> Body | None:
        """Return what the server answers a prompt past its window (None: Ollama cuts the
        prompt silently and answers)."""
        if self.name == "ollama":
            return None
        if self.name in ("llamacpp", "think"):
            message = (
                f"request ({prompt_tokens} tokens) exceeds the available context size"
                f" ({window} tokens), try increasing it"
            )
            return self.error(
                400,
                message,
                type="exceed_context_size_error",
                n_prompt_tokens=prompt_tokens,
                n_ctx=window,
            )
        if self.name.startswith("vllm"):
            message = (
                f"This model's maximum context length is {window} tokens. However, your request"
                f" has {prompt_tokens} input tokens. Please reduce the length of the input"
                " messages."
            )
            return self.error(400, message)
        if self.name == "llama-cpp-python":
            message = (
                f"This model's maximum context length is {window} tokens. However, you requested"
                f" {prompt_tokens + (max_tokens or 0)} tokens ({prompt_tokens} in the messages,"
                f" {max_tokens} in the completion). Please reduce the length of the messages or"
                " completion."
            )
        else:
            message = (
                f"This model's maximum context length is {window} tokens. However, your messages"
                f" resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
            )
        return self.error(
            400,
            message,
            type="invalid_request_error",
            param="messages",
            code="context_length_exceeded",
        )

    # --- where the window is told --------------------------------------------------------
    def model_card(self, model: str, window: int | None) -> dict[str, Any]:
        card: dict[str, Any] = {"id": model, "object": "model", "created": 1735142223}
        if self.name.startswith("vllm"):
            card.update(owned_by="vllm", root=model, parent=None, max_model_len=window)
        elif self.name in ("llamacpp", "think"):
            meta = {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": 8192, "n_embd": 576}
            card.update(owned_by="llamacpp", meta=meta)
        elif self.name == "llama-cpp-python":
            card = {"id": model, "object": "model", "owned_by": "me", "permissions": []}
        else:
            card["owned_by"] = "library" if self.name == "ollama" else "fake"
        return card

    def props(self, model: str, window: int | None) -> Body:
        """`GET /props`: llama.cpp's server settings (404 elsewhere)."""
        if self.name not in ("llamacpp", "think"):
            return self.error(404, "File Not Found")
        settings = {"params": {"n_predict": -1, "temperature": 0.8}, "n_ctx": window or 4096}
        body = {
            "default_generation_settings": settings,
            "total_slots": 1,
            "model_alias": model,
            "model_path": f"/models/{model}.gguf",
            "modalities": {"vision": False, "audio": False},
            "build_info": "b6000-abcdef0",
        }
        return 200, _dumps(body)

    def show(self, model: str, window: int | None, num_ctx: int | None) -> Body:
        """`POST /api/show`: Ollama's model information (404 elsewhere)."""
        if self.name != "ollama":
            return 404, b"404 page not found"
        parameters = ['stop                           "<|im_end|>"']
        if num_ctx is not None:
            parameters.insert(0, f"num_ctx                        {num_ctx}")
        body = {
            "parameters": "\n".join(parameters),
            "details": {"format": "gguf", "family": "qwen3"},
            "model_info": {
                "general.architecture": "qwen3",
                "qwen3.context_length": window or 40960,
            },
            "capabilities": ["completion", "tools", "thinking"],
        }
        return 200, _dumps(body)


_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    501: "not_supported_error",
    503: "unavailable_error",
}
_OLLAMA_TYPES = {400: "invalid_request_error", 404: "not_found_error"}
_VLLM_TYPES = {400: "BadRequestError", 404: "NotFoundError", 429: "TooManyRequests"}


def _dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


DIALECTS = {
    d.name: d
    for d in (
        Dialect("openai", None),
        Dialect("openrouter", "reasoning"),
        Dialect("deepseek", "reasoning_content"),
        Dialect("llamacpp", "reasoning_content"),
        Dialect("llama-cpp-python", None),
        Dialect("vllm", "reasoning"),
        Dialect("vllm-0.10", "reasoning_content"),
        Dialect("ollama", "reasoning"),
        Dialect("think", None, think_inline=True),
    )
}
