"""The list sorted by last message puts conversations without messages last, both orders.

On PostgreSQL the index that serves the (default) descending order becomes
`last_message_at DESC NULLS LAST` to match the ORDER BY. SQLite cannot say NULLS LAST in
an index and needs nothing: it sorts NULLs first ascending, so last descending already.
The model's state keeps the plain index definition (Django's state is vendor-neutral).
"""

from django.db import migrations

INDEX = "conv_owner_last_msg"
TABLE = "conversations_conversation"


def nulls_last(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")
    schema_editor.execute(
        f"CREATE INDEX {INDEX} ON {TABLE} (created_by_id, last_message_at DESC NULLS LAST, id DESC)"
    )


def nulls_first(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")
    schema_editor.execute(f"CREATE INDEX {INDEX} ON {TABLE} (created_by_id, last_message_at DESC, id DESC)")


class Migration(migrations.Migration):
    dependencies = [("conversations", "0005_models_and_instructions")]

    operations = [migrations.RunPython(nulls_last, nulls_first)]
