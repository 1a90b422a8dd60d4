"""What reading reasoning costs per streamed event; prints one JSON line.

Every event a model server streams passes `Completion.absorb` (agent/completion_events.py), which
now also reads `reasoning_content`/`reasoning`, and the text then passes the `<think>`
splitter (agent/reasoning.py) before it is cleaned (agent/incoming.py). Measured on one
core, in process, 100,000 events of each kind, medians of 7 alternated runs:
- `plain`: the answer's events through absorb and the cleaner only (the path before reasoning
  was read: no splitter);
- `answer`: the same events through the whole path as it is now;
- `reasoning` / `think`: a reasoning model's events, as `reasoning_content` deltas and as
  inline `<think>` text.
Target (issue 54): the parser adds ≤ 2% of the server's CPU per token, which bench/stream.py
puts at ~300 µs at 20 tokens/s: `added_share_of_token` is `answer - plain` over that.

    uv run python bench/reasoning_parser.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from agent import completion_events
from agent.incoming import TextStream
from agent.reasoning import ThinkSplitter

EVENTS = 100_000
RUNS = 7
SERVER_US_PER_TOKEN = 300.0  # bench/stream.py, 20 tokens/s (bench/README.md)


def lines(delta) -> list[str]:
    return [
        orjson.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": delta(i), "finish_reason": None}],
            }
        ).decode()
        for i in range(EVENTS)
    ]


def seconds(events: list[str], *, split: bool) -> float:
    reply = completion_events.Completion()
    text, reasoning = TextStream(lambda t: None), TextStream(lambda t: None)
    on_text = ThinkSplitter(text, reasoning) if split else text
    started = time.process_time()
    for line in events:
        reply.absorb(completion_events.event(line), on_text, reasoning)
    return time.process_time() - started


def main() -> None:
    answer = lines(lambda i: {"content": f"word{i} "})
    reasoning = lines(lambda i: {"reasoning_content": f"thought{i} "})
    think = lines(lambda i: {"content": "<think>" if i == 0 else f"thought{i} "})
    runs: dict[str, list[float]] = {"plain": [], "answer": [], "reasoning": [], "think": []}
    for _ in range(RUNS):  # alternated, so the machine's noise falls on every kind alike
        runs["plain"].append(seconds(answer, split=False))
        runs["answer"].append(seconds(answer, split=True))
        runs["reasoning"].append(seconds(reasoning, split=True))
        runs["think"].append(seconds(think, split=True))
    us = {k: round(statistics.median(v) / EVENTS * 1e6, 3) for k, v in runs.items()}
    added = us["answer"] - us["plain"]
    print(
        json.dumps(
            {
                "bench": "reasoning_parser",
                "events": EVENTS,
                "us_per_event": us,
                "added_us_per_event": round(added, 3),
                "added_share_of_token": round(added / SERVER_US_PER_TOKEN, 4),
                "targets": {"added_share_of_token_le_0.02": added / SERVER_US_PER_TOKEN <= 0.02},
            }
        )
    )


if __name__ == "__main__":
    main()
