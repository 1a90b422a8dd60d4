"""A message's full-text vector covers its first SEARCH_VECTOR_CHARS characters.

PostgreSQL refuses a tsvector over 1 MiB: a message of a million characters of distinct
words (a long reply, an imported log) could not be stored at all, which left its reply
run stuck and failed its import with a 500. 200,000 characters of Korean, the densest
case, make well under 1 MiB of vector; longer text is still found by the trigram index.
"""

from django.db import migrations

SEARCH_VECTOR_CHARS = 200_000

FORWARD = [
    "DROP INDEX IF EXISTS message_search_vector",
    "ALTER TABLE conversations_message DROP COLUMN IF EXISTS search_vector",
    "ALTER TABLE conversations_message ADD COLUMN search_vector tsvector GENERATED ALWAYS AS"
    f" (to_tsvector('simple'::regconfig, left(COALESCE(content, ''), {SEARCH_VECTOR_CHARS})))"
    " STORED",
    "CREATE INDEX message_search_vector ON conversations_message USING gin (search_vector)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS message_search_vector",
    "ALTER TABLE conversations_message DROP COLUMN IF EXISTS search_vector",
    "ALTER TABLE conversations_message ADD COLUMN search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, COALESCE(content, ''))) STORED",
    "CREATE INDEX message_search_vector ON conversations_message USING gin (search_vector)",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("conversations", "0010_pinned_and_temporary")]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
