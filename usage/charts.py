"""Server-rendered charts: the geometry of SVG bars (templates/usage/_*.html draw them).

No JavaScript and no chart library: a chart is an SVG whose bars each carry a `<title>`,
with the same figures in a table beside it for screen readers and copying.
"""

from __future__ import annotations

from dataclasses import dataclass

from .selectors import Totals

SLOT = 10  # a day's width in the chart's own units
HEIGHT = 100
GAP = 2


@dataclass(frozen=True)
class Bar:
    x: int
    y: float
    width: int
    height: float
    key: str
    total: int


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    peak: int  # the tallest bar's tokens (the top of the scale)


def day_chart(days: list[Totals]) -> Chart:
    """Return one column per day, scaled to the busiest day."""
    peak = max((d.total_tokens for d in days), default=0)
    bars = []
    for i, day in enumerate(days):
        height = HEIGHT * day.total_tokens / peak if peak else 0
        if day.total_tokens and height < 1:
            height = 1  # a day that used something stays visible
        bars.append(
            Bar(i * SLOT + GAP // 2, HEIGHT - height, SLOT - GAP, height, day.key, day.total_tokens)
        )
    return Chart(max(1, len(days)) * SLOT, HEIGHT, bars, peak)


def shares(items: list[Totals]) -> list[tuple[Totals, int]]:
    """Return each item with its bar's length in percent of the largest item."""
    peak = max((item.total_tokens for item in items), default=0)
    return [(item, round(100 * item.total_tokens / peak) if peak else 0) for item in items]
