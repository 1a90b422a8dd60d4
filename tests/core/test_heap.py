"""A server process freezes its long-lived objects once, after its first stored reply."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from conversations import services
from core import heap
from tests.conversations.conftest import model  # noqa: F401  (the fixture)
from tests.support.turns import ask

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter: 300,000 live objects, settled; then a new reference cycle.
PROBE = """
import gc, json
from core import heap
kept = [[i] for i in range(300_000)]
walked_before = len(gc.get_objects())
heap.settle_once()
walked_after, frozen = len(gc.get_objects()), gc.get_freeze_count()
heap.settle_once()
cycle = []; cycle.append(cycle); del cycle
print(json.dumps({"walked_before": walked_before, "walked_after": walked_after,
                  "young_threshold": gc.get_threshold()[0],
                  "frozen": frozen, "frozen_again": gc.get_freeze_count(),
                  "new_garbage_collected": gc.collect()}))
"""


def test_settling_takes_long_lived_objects_out_of_full_collections_once():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["walked_before"] > 300_000
    assert seen["walked_after"] < 1_000  # what a full collection still walks
    assert seen["frozen"] > 300_000
    assert seen["frozen_again"] == seen["frozen"]  # the second call did nothing
    assert seen["new_garbage_collected"] >= 1  # garbage made later is still collected
    assert seen["young_threshold"] == heap.YOUNG_THRESHOLD


@pytest.mark.django_db(transaction=True)
async def test_the_first_stored_reply_settles_the_process(model, alice, monkeypatch):  # noqa: F811
    gc.unfreeze()
    monkeypatch.setattr(heap, "_settled", False)
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="first")
    assert gc.get_freeze_count() == 0
    reply, _ = await ask(alice, conversation, content="hello")
    assert reply.finish_reason == "end_turn"
    assert gc.get_freeze_count() > 10_000  # Django, LangChain, the graph: out of sight
