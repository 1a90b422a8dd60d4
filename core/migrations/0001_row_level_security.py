"""The app's roles and the row-level security policies of every user-owned table (PostgreSQL)."""

from django.db import migrations

from core import rls_policies


def _run(schema_editor, statements):
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite has no RLS: the app's own checks stay the only wall there
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


# The tables this migration protects (a table added to rls_policies.OWNED later is
# protected by the migration that creates it).
TABLES = (
    "accounts_apitoken",
    "accounts_usersettings",
    "conversations_project",
    "conversations_conversation",
    "conversations_message",
    "conversations_messagefeedback",
    "conversations_replyrun",
    "conversations_share",
    "conversations_attachment",
    "knowledge_document",
    "knowledge_documentchunk",
    "store",
)


def protect(apps, schema_editor):
    _run(schema_editor, [rls_policies.ROLES_SQL])
    _run(schema_editor, [sql for table in TABLES for sql in rls_policies.protect(table)])


def unprotect(apps, schema_editor):
    _run(schema_editor, [sql for table in TABLES for sql in rls_policies.unprotect(table)])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_memory_enabled"),
        ("conversations", "0009_attachments"),
        ("knowledge", "0003_scope"),
        ("memories", "0001_store"),
    ]

    operations = [migrations.RunPython(protect, unprotect)]
