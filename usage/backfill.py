"""Rebuild the usage rollup from the stored replies (the migration, and bench/usage.py).

A reply counts when a run produced it (`run_id` is its own id: not imported, not a
fork's copy); its turn usage is `metadata.usage`. Rows already there are replaced, so
running it again gives the same figures. The monthly per-conversation table is then
rebuilt from the rollup.
"""

from __future__ import annotations

from typing import Any

_TOKENS = (
    "CASE WHEN jsonb_typeof(m.metadata->'usage'->'{key}') = 'number'"
    " THEN GREATEST(0, (m.metadata->'usage'->>'{key}')::numeric)::bigint ELSE 0 END"
)

BACKFILL_SQL = f"""
INSERT INTO usage_usagerollup
  (day, user_id, model, conversation_id, input_tokens, output_tokens, replies)
SELECT (m.created_at AT TIME ZONE 'UTC')::date, c.created_by_id, m.model, m.conversation_id,
       SUM({_TOKENS.format(key="input_tokens")}), SUM({_TOKENS.format(key="output_tokens")}),
       COUNT(*)
FROM conversations_message m JOIN conversations_conversation c ON c.id = m.conversation_id
WHERE m.role = 'assistant' AND m.run_id = m.id
GROUP BY 1, 2, 3, 4
ON CONFLICT (day, user_id, model, conversation_id) DO UPDATE SET
  input_tokens = EXCLUDED.input_tokens,
  output_tokens = EXCLUDED.output_tokens,
  replies = EXCLUDED.replies
"""


MONTHS_SQL = """
INSERT INTO usage_conversationmonth
  (month, user_id, conversation_id, input_tokens, output_tokens, replies)
SELECT date_trunc('month', day)::date, user_id, conversation_id,
       SUM(input_tokens), SUM(output_tokens), SUM(replies)
FROM usage_usagerollup
GROUP BY 1, 2, 3
ON CONFLICT (month, user_id, conversation_id) DO UPDATE SET
  input_tokens = EXCLUDED.input_tokens,
  output_tokens = EXCLUDED.output_tokens,
  replies = EXCLUDED.replies
"""


def backfill_rollup(cursor: Any) -> None:
    """Rebuild the daily rollup from every stored reply (PostgreSQL; every row visible)."""
    cursor.execute(BACKFILL_SQL)
    cursor.execute("ANALYZE usage_usagerollup")


def backfill(cursor: Any) -> None:
    """Rebuild the rollup from every stored reply, then the monthly table from the rollup
    (PostgreSQL; run with every row visible). Their statistics are refreshed: the planner
    picks a parallel scan for long ranges only when it knows how many rows there are."""
    backfill_rollup(cursor)
    cursor.execute(MONTHS_SQL)
    cursor.execute("ANALYZE usage_conversationmonth")
