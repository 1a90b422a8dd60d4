"""Full-text and substring search on PostgreSQL; nothing to do on SQLite.

The tsvector columns are stored generated columns (what Django's
`GeneratedField(SearchVector(..., config="simple"))` emits), added here with SQL rather
than as model fields so the model stays the same on SQLite, which has no tsvector.
`simple` keeps words as written (no stemming), so Korean and English behave alike;
pg_trgm's GIN indexes answer substrings ('회의' inside '회의가').
"""

from django.db import migrations

FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "ALTER TABLE conversations_message ADD COLUMN search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, COALESCE(content, ''))) STORED",
    "CREATE INDEX message_search_vector ON conversations_message USING gin (search_vector)",
    "CREATE INDEX message_content_trgm ON conversations_message USING gin (content gin_trgm_ops)",
    "ALTER TABLE conversations_conversation ADD COLUMN search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, COALESCE(title, ''))) STORED",
    "CREATE INDEX conversation_search_vector ON conversations_conversation"
    " USING gin (search_vector)",
    "CREATE INDEX conversation_title_trgm ON conversations_conversation"
    " USING gin (title gin_trgm_ops)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS conversation_title_trgm",
    "DROP INDEX IF EXISTS conversation_search_vector",
    "ALTER TABLE conversations_conversation DROP COLUMN IF EXISTS search_vector",
    "DROP INDEX IF EXISTS message_content_trgm",
    "DROP INDEX IF EXISTS message_search_vector",
    "ALTER TABLE conversations_message DROP COLUMN IF EXISTS search_vector",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("conversations", "0001_initial")]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
