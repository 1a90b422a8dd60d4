"""The row-level security policies: which rows of each table belong to the user in scope.

One entry per table that holds a user's rows; migrations turn them into SQL (`protect`)
and tests/core/test_rls.py checks every model that points at a user is listed here. Each
table gets RLS enabled *and forced* (the owner obeys it too; superusers never do, which
is why the app runs as `chat_app`), and:
- `app_owner` for `chat_app`: the rows of `app.user_id` (nothing when it is unset);
- `app_maintenance` for `chat_maintenance`: every row (staff, purges, the watchdog);
- `app_reader` for `chat_app`, on tables in READABLE: rows anyone may read (shared presets);
- `share_reader` for `chat_share`, on the two tables a share page reads.
"""

from __future__ import annotations

from typing import Any

from .rls import APP_ROLE, MAINTENANCE_ROLE, SHARE_ROLE

USER_ID = "NULLIF(current_setting('app.user_id', true), '')::bigint"
SHARE_TOKEN = "current_setting('app.share_token', true)"


def owner_column(column: str) -> str:
    """Rows whose `column` is the user in scope."""
    return f"{column} = {USER_ID}"


def through_conversation(column: str = "conversation_id") -> str:
    """Rows of a conversation the user in scope owns."""
    owned = owner_column("created_by_id")
    return f"{column} IN (SELECT id FROM conversations_conversation WHERE {owned})"


# table -> the rows the user in scope owns (SQL over that table's columns)
OWNED: dict[str, str] = {
    "accounts_apitoken": (
        # The token whose secret the caller presented is visible while authenticating it
        # (rls.bearer): before that, there is no user to scope by.
        f"{owner_column('owner_id')} OR token_hash = current_setting('app.token_hash', true)"
    ),
    "accounts_usersettings": owner_column("user_id"),
    "conversations_project": owner_column("owner_id"),
    "conversations_conversation": owner_column("created_by_id"),
    "conversations_message": through_conversation(),
    "conversations_messagefeedback": owner_column("user_id"),
    "conversations_replyrun": through_conversation(),
    "conversations_share": owner_column("created_by_id"),
    "conversations_attachment": owner_column("created_by_id"),
    "knowledge_document": owner_column("owner_id"),
    "knowledge_documentchunk": owner_column("owner_id"),
    "knowledge_savedquestion": owner_column("owner_id"),
    # sso/: the user's links to a provider account (a sign-in looks them up as maintenance).
    "sso_ssolink": owner_column("user_id"),
    # LangGraph's store (memories/): namespace ("memories", "<user id>").
    "store": "prefix = 'memories.' || current_setting('app.user_id', true)",
    # presets/: the user's own (READABLE adds the shared ones, read-only).
    "presets_preset": owner_column("owner_id"),
    # prompts/: the same (READABLE adds the shared ones, read-only).
    "prompts_prompt": owner_column("owner_id"),
    # transfers/: the user's exports of all their conversations, and their large imports.
    "transfers_exportjob": owner_column("owner_id"),
    "transfers_importjob": owner_column("owner_id"),
    # A staff member (or a user signing in) writes entries naming themselves; staff read
    # all of them in the admin's maintenance scope.
    "audit_auditentry": owner_column("actor_id"),
    # usage/: the user's own rollup rows; budgets naming them or one of their groups
    # (staff write budgets in the admin, as maintenance).
    "usage_usagerollup": owner_column("user_id"),
    "usage_conversationmonth": owner_column("user_id"),
    "usage_budget": (
        f"{owner_column('user_id')} OR (user_id IS NULL AND group_id IN"
        f" (SELECT group_id FROM auth_user_groups WHERE {owner_column('user_id')}))"
    ),
}

# Tables nobody may change or remove a row of once written (the audit log): the app and
# maintenance roles get SELECT and INSERT only, whatever a policy would allow.
APPEND_ONLY: frozenset[str] = frozenset({"audit_auditentry"})

# table -> rows the user in scope may read besides their own (never change): presets
# and prompts staff shared with everyone.
READABLE: dict[str, str] = {"presets_preset": "shared", "prompts_prompt": "shared"}

# table -> what the share role reads: the link named by app.share_token, its snapshot.
SHARED: dict[str, str] = {
    "conversations_share": f"token = {SHARE_TOKEN}",
    "conversations_message": (
        f"EXISTS (SELECT 1 FROM conversations_share s WHERE s.token = {SHARE_TOKEN}"
        " AND s.conversation_id = conversations_message.conversation_id"
        " AND s.message_ids ? conversations_message.id::text)"
    ),
}

ROLES_SQL = f"""
DO $$
BEGIN
  -- Made here when missing (needs CREATEROLE); a DBA may have made them beforehand.
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
    CREATE ROLE {APP_ROLE} NOLOGIN NOINHERIT;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{MAINTENANCE_ROLE}') THEN
    CREATE ROLE {MAINTENANCE_ROLE} NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{SHARE_ROLE}') THEN
    CREATE ROLE {SHARE_ROLE} NOLOGIN;
  END IF;
  -- The app may switch to these (SET LOCAL ROLE), never holds their rights otherwise.
  IF NOT pg_has_role('{APP_ROLE}', '{MAINTENANCE_ROLE}', 'MEMBER') THEN
    GRANT {MAINTENANCE_ROLE} TO {APP_ROLE};
  END IF;
  IF NOT pg_has_role('{APP_ROLE}', '{SHARE_ROLE}', 'MEMBER') THEN
    GRANT {SHARE_ROLE} TO {APP_ROLE};
  END IF;
EXCEPTION WHEN unique_violation OR duplicate_object THEN
  NULL;  -- another database's migration made them at the same moment (roles are global)
END $$;
"""


def protect(table: str) -> list[str]:
    """SQL that puts `table` under RLS with its policies (OWNED, SHARED)."""
    rows = OWNED[table]
    sql = [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY app_owner ON {table} TO {APP_ROLE} USING ({rows}) WITH CHECK ({rows})",
        f"CREATE POLICY app_maintenance ON {table} TO {MAINTENANCE_ROLE}"
        " USING (true) WITH CHECK (true)",
    ]
    if table in READABLE:
        sql.append(
            f"CREATE POLICY app_reader ON {table} FOR SELECT TO {APP_ROLE}"
            f" USING ({READABLE[table]})"
        )
    if table in SHARED:
        sql.append(
            f"CREATE POLICY share_reader ON {table} FOR SELECT TO {SHARE_ROLE}"
            f" USING ({SHARED[table]})"
        )
    return sql


def protect_table(table: str) -> Any:
    """Return the migration operation that puts `table` under RLS (`protect`), and takes it
    out again when unapplied; nothing on SQLite, which has no RLS."""
    from django.db import migrations

    def run(statements: list[str], schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            with schema_editor.connection.cursor() as cursor:
                for sql in statements:
                    cursor.execute(sql)

    return migrations.RunPython(
        lambda apps, schema_editor: run(protect(table), schema_editor),
        lambda apps, schema_editor: run(unprotect(table), schema_editor),
    )


def unprotect(table: str) -> list[str]:
    """SQL that takes `table` out of RLS again."""
    return [
        f"DROP POLICY IF EXISTS app_owner ON {table}",
        f"DROP POLICY IF EXISTS app_maintenance ON {table}",
        f"DROP POLICY IF EXISTS share_reader ON {table}",
        f"DROP POLICY IF EXISTS app_reader ON {table}",
        f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
    ]


def grants(tables: list[str], read_only: list[str]) -> list[str]:
    """SQL that lets the app and maintenance roles use `tables` (the policies then decide
    which rows; APPEND_ONLY tables only read and insert) and the share role read what a
    share page shows. The agent's checkpoint tables are never in `tables`: only the agent
    runtime's own connection reads them."""
    both = f"{APP_ROLE}, {MAINTENANCE_ROLE}"
    sql = [f"GRANT USAGE ON SCHEMA public TO {both}, {SHARE_ROLE}"]
    for table in tables:
        if table in APPEND_ONLY:
            sql.append(f"GRANT SELECT, INSERT ON {table} TO {both}")
            sql.append(f"REVOKE UPDATE, DELETE, TRUNCATE ON {table} FROM {both}")
        else:
            sql.append(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {both}")
    sql += [f"GRANT SELECT ON {table} TO {both}" for table in read_only]
    sql.append(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {both}")
    sql += [f"GRANT SELECT ON {table} TO {SHARE_ROLE}" for table in SHARED if table in tables]
    return sql
