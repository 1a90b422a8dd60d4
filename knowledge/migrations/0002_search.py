"""Full-text and trigram indexes on PostgreSQL; nothing to do on SQLite.

`search_vector` is a stored generated column, what Django's
`GeneratedField(SearchVector(..., config="simple"))` emits, with the heading weighted
above the body; it is added with SQL so the model stays the same on SQLite, which has no
tsvector. `simple` keeps words as written (no stemming), so Korean and English behave
alike; `terms` carries suffixes of Korean words so a prefix query ('휴직:*') finds a
word inside a compound ('육아휴직은'). pg_trgm's GIN index on `text` answers substrings
and similarity.
"""

from django.db import migrations

FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "ALTER TABLE knowledge_documentchunk ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
    " setweight(to_tsvector('simple'::regconfig, COALESCE(heading, '')), 'A')"
    " || setweight(to_tsvector('simple'::regconfig, COALESCE(text, '')), 'B')"
    " || setweight(to_tsvector('simple'::regconfig, COALESCE(terms, '')), 'C')"
    ") STORED",
    # Kept in the row (compressed) rather than TOAST: ranking reads it for every match.
    "ALTER TABLE knowledge_documentchunk ALTER COLUMN search_vector SET STORAGE MAIN",
    "CREATE INDEX chunk_search_vector ON knowledge_documentchunk USING gin (search_vector)",
    "CREATE INDEX chunk_text_trgm ON knowledge_documentchunk USING gin (text gin_trgm_ops)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS chunk_text_trgm",
    "DROP INDEX IF EXISTS chunk_search_vector",
    "ALTER TABLE knowledge_documentchunk DROP COLUMN IF EXISTS search_vector",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
