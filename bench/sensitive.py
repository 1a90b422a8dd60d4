"""The sensitive-information detector's precision and recall, and its speed; one JSON line.

Sets (tests/text/sensitive_sets.py): negatives — the 40 test questions and the two test
documents, the demo conversations, and 348 ordinary Korean and English sentences with
numbers (dates, prices, order and tracking numbers, versions, IPs, registration-shaped
numbers with a wrong check digit, Luhn-failing card-shaped numbers, unassigned phone-like
numbers); positives — 20 generated valid examples of each kind (check digits right) in a
sentence. A finding counts as right when its kind and span are the example's.

    uv run python bench/sensitive.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatsite.settings")

import django  # noqa: E402

django.setup()

from tests.text.sensitive_sets import (  # noqa: E402
    corpus_texts,
    ordinary_sentences,
    valid_examples,
)
from text.sensitive import find  # noqa: E402
from transfers.management.commands.demo import DEMO_CONVERSATIONS  # noqa: E402


def main() -> None:
    samples = [sample for language in DEMO_CONVERSATIONS.values() for sample in language]
    demo = [text for _, _, turns in samples for _, text in turns]
    negatives = corpus_texts() + demo + ordinary_sentences()
    positives = valid_examples()
    false_positives = Counter(f.kind for text in negatives for f in find(text))
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    extra = 0
    for kind, secret, sentence in positives:
        totals[kind] += 1
        found = [(f.kind, sentence[f.start : f.end]) for f in find(sentence)]
        hits[kind] += (kind, secret) in found
        extra += sum(1 for item in found if item != (kind, secret))
    true_positives = sum(hits.values())
    flagged = true_positives + extra + sum(false_positives.values())
    timings = []
    sample = (negatives * 3)[:1000]
    for text in sample:
        started = time.perf_counter()
        find(text)
        timings.append((time.perf_counter() - started) * 1e6)
    print(
        json.dumps(
            {
                "negatives": len(negatives),
                "false_positives": sum(false_positives.values()),
                "false_positives_by_kind": dict(false_positives),
                "positives": len(positives),
                "recall_by_kind": {k: round(hits[k] / totals[k], 3) for k in sorted(totals)},
                "recall": round(true_positives / len(positives), 3),
                "precision": round(true_positives / flagged, 3) if flagged else None,
                "other_findings_in_positive_sentences": extra,
                "us_per_message_p50": round(statistics.median(timings), 1),
                "us_per_message_p99": round(sorted(timings)[int(len(timings) * 0.99)], 1),
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
