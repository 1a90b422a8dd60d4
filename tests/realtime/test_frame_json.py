"""Frames are written as json would write them, however they are serialized."""

from __future__ import annotations

import json

import pytest

from conversations.realtime.frames import dumps


def as_json_writes(frame) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    "text",
    [
        "안녕하세요, 세계",
        'quotes " and \\ backslash',
        "lines\nand\ttabs\r and \x00 NUL, \x1f, \x7f",
        "emoji 🙂 and \u2028 \u2029 separators",
        "",
    ],
)
def test_a_token_frame_is_what_json_writes(text):
    frame = {"type": "token", "run_id": "r1", "index": 12, "text": text, "ok": True, "n": None}
    assert dumps(frame) == as_json_writes(frame)
    assert json.loads(dumps(frame))["text"] == text


def test_what_the_fast_path_refuses_is_written_as_before():
    for frame in (
        {"type": "token", "text": "half a pair \ud83d"},  # a lone surrogate
        {"type": "x", "big": 2**70},
        {"type": "x", 1: "a key that is not a string"},
    ):
        assert dumps(frame) == as_json_writes(frame)
