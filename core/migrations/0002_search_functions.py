"""Text search that keeps its indexes under row-level security (PostgreSQL).

Under forced RLS the planner may use an index for a condition ahead of the policy only when
every operator in it is LEAKPROOF; full-text `@@` and pg_trgm's `ILIKE` are not, so as the
app role every search walked all of the user's rows through the owner index and tested each
(document retrieval at 10,000 documents: p95 34 ms before RLS, 256 ms after). Declaring them
LEAKPROOF needs a superuser, and would be a lie.

So each search is a function that runs as `chat_search` (SECURITY DEFINER): a role nobody
logs in as or switches to, which may only read the searched tables, through a policy of its
own that shows every row. The function applies the owner filter itself, from the same
transaction-local setting the policies read (`app.user_id`: never an argument), so the
planner is free to start from the GIN index; it returns ids (and a rank), which the app then
reads as `chat_app`, under RLS and with its own owner filter, as before. Only `chat_app` may
call them. Their search_path is pinned and every table named with its schema.
"""

from django.db import migrations

SEARCH_ROLE = "chat_search"
APP_ROLE = "chat_app"
# The user in scope, exactly as the policies read it (core/rls_policies.py USER_ID).
USER_ID = "NULLIF(pg_catalog.current_setting('app.user_id', true), '')::bigint"
SEARCHED = ["knowledge_documentchunk", "conversations_message", "conversations_conversation"]
PINNED = "SET search_path = pg_catalog, public, pg_temp"


def _quoted(sql: str) -> str:
    """Return `sql` for use inside a single-quoted string (the text a function EXECUTEs)."""
    return sql.replace("'", "''")


ROLE_SQL = f"""
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{SEARCH_ROLE}') THEN
    CREATE ROLE {SEARCH_ROLE} NOLOGIN NOINHERIT;
  END IF;
EXCEPTION WHEN unique_violation OR duplicate_object THEN
  NULL;  -- another database's migration made it at the same moment (roles are global)
END $$;
"""

# The first `scan_limit` chunks holding the query, ranked, at most `row_limit` (retrieval
# ranks these again with titles and headings: knowledge/retrieval.py). Each call is planned
# with its values (EXECUTE ... USING), as the query was when the app sent it whole, and
# with sequential scans off: the planner prices a GIN scan for a tsquery of many prefix
# terms far above its real cost and reads the whole table instead (330 ms instead of 25
# at 55,000 chunks).
CHUNK_MATCHES = f"""
CREATE FUNCTION public.knowledge_chunk_matches(
    search text, in_scope uuid, seen bigint[], scan_limit integer, row_limit integer)
RETURNS TABLE (id bigint, fts real)
LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 60
{PINNED}
SET enable_seqscan = off
AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT c.id, pg_catalog.ts_rank(c.search_vector, pg_catalog.to_tsquery(''simple'', $1), 1)'
    '   AS fts'
    ' FROM (SELECT c.id, c.search_vector FROM public.knowledge_documentchunk c'
    '   WHERE c.owner_id = {_quoted(USER_ID)}'
    '     AND c.search_vector @@ pg_catalog.to_tsquery(''simple'', $1)'
    '     AND (c.scope IS NULL OR c.scope = $2) AND NOT (c.id = ANY($3))'
    '   LIMIT $4) c'
    ' ORDER BY fts DESC, c.id LIMIT $5'
    USING search, in_scope, seen, scan_limit, row_limit;
END
$$
"""

# Messages of the user's listed (not temporary) conversations that match every term: term i
# matches as a substring (`ILIKE patterns[i]`, pg_trgm's index) or, when prefixes[i] is not
# null, as a word prefix (`to_tsquery('simple', prefixes[i])`, the search_vector index).
# Dynamic only in the number of terms: the values go in as parameters, the conversations'
# ids too (fetched first, so the planner knows how many messages they hold and weighs the
# indexes against walking them), and each call is planned with them.
MESSAGE_MATCHES = f"""
CREATE FUNCTION public.conversations_message_matches(patterns text[], prefixes text[])
RETURNS TABLE (id uuid, conversation_id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
{PINNED}
AS $$
DECLARE
  owned uuid[];
  terms text := '';
BEGIN
  IF coalesce(cardinality(patterns), 0) NOT BETWEEN 1 AND 16
     OR cardinality(prefixes) IS DISTINCT FROM cardinality(patterns) THEN
    RAISE EXCEPTION 'conversations_message_matches: 1 to 16 patterns, one prefix (or null) each';
  END IF;
  SELECT pg_catalog.array_agg(c.id) INTO owned FROM public.conversations_conversation c
    WHERE c.created_by_id = {USER_ID} AND NOT c.temporary;
  IF owned IS NULL THEN
    RETURN;
  END IF;
  FOR i IN 1 .. cardinality(patterns) LOOP
    terms := terms || format(' AND (m.content ILIKE $1[%s]', i)
      || CASE WHEN prefixes[i] IS NULL THEN ')'
         ELSE format(' OR m.search_vector @@ pg_catalog.to_tsquery(''simple'', $2[%s]))', i) END;
  END LOOP;
  RETURN QUERY EXECUTE
    'SELECT m.id, m.conversation_id FROM public.conversations_message m'
    ' WHERE m.conversation_id = ANY($3)' || terms
    USING patterns, prefixes, owned;
END
$$
"""

# Recall in one conversation of the user's (temporary ones too: their own messages): its
# newest user and assistant messages, at most `row_limit`, holding a word that starts with
# one of the prefix query's words or, for each of `patterns`, that substring.
RECALL_MATCHES = f"""
CREATE FUNCTION public.conversations_recall_matches(
    in_conversation uuid, prefixes text, patterns text[], row_limit integer)
RETURNS TABLE (id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
{PINNED}
AS $$
DECLARE
  holds text[] := '{{}}';
BEGIN
  IF coalesce(cardinality(patterns), 0) > 32 THEN
    RAISE EXCEPTION 'conversations_recall_matches: at most 32 patterns';
  END IF;
  IF prefixes IS NOT NULL THEN
    holds := holds || 'm.search_vector @@ pg_catalog.to_tsquery(''simple'', $2)'::text;
  END IF;
  FOR i IN 1 .. coalesce(cardinality(patterns), 0) LOOP
    holds := holds || format('m.content ILIKE $3[%s]', i);
  END LOOP;
  IF cardinality(holds) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE
    'SELECT m.id FROM public.conversations_message m'
    ' WHERE m.conversation_id = $1 AND m.role IN (''user'', ''assistant'')'
    '   AND EXISTS (SELECT FROM public.conversations_conversation c'
    '     WHERE c.id = $1 AND c.created_by_id = {_quoted(USER_ID)})'
    '   AND (' || array_to_string(holds, ' OR ') || ')'
    ' ORDER BY m.sequence_number DESC LIMIT $4'
    USING in_conversation, prefixes, patterns, row_limit;
END
$$
"""

FUNCTIONS = {
    "knowledge_chunk_matches": ("text, uuid, bigint[], integer, integer", CHUNK_MATCHES),
    "conversations_message_matches": ("text[], text[]", MESSAGE_MATCHES),
    "conversations_recall_matches": ("uuid, text, text[], integer", RECALL_MATCHES),
}


def _as_search_role(statements: list[str]) -> str:
    """Wrap `statements` so the migrating login may hand objects to (or drop those of) the
    search role: a non-superuser owner needs to be a member of it, and the role needs CREATE
    on the schema, for that moment only (a lasting membership would let the owner's login
    read every row through the role's policy)."""
    body = "\n  ".join(f"EXECUTE {_literal(sql)};" for sql in statements)
    return f"""
DO $$
DECLARE
  joined boolean := NOT pg_has_role(current_user, '{SEARCH_ROLE}', 'MEMBER');
  may_create boolean := NOT has_schema_privilege('{SEARCH_ROLE}', 'public', 'CREATE');
BEGIN
  IF joined THEN EXECUTE format('GRANT {SEARCH_ROLE} TO %I', current_user); END IF;
  IF may_create THEN GRANT CREATE ON SCHEMA public TO {SEARCH_ROLE}; END IF;
  {body}
  IF may_create THEN REVOKE CREATE ON SCHEMA public FROM {SEARCH_ROLE}; END IF;
  IF joined THEN EXECUTE format('REVOKE {SEARCH_ROLE} FROM %I', current_user); END IF;
END $$;
"""


def _literal(sql: str) -> str:
    return "$sql$" + sql + "$sql$"


def _run(schema_editor, statements):
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite has no RLS: its searches stay as they were
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def create(apps, schema_editor):
    statements = [ROLE_SQL]
    for table in SEARCHED:
        statements += [
            f"GRANT SELECT ON public.{table} TO {SEARCH_ROLE}",
            f"CREATE POLICY search_definer ON public.{table} FOR SELECT TO {SEARCH_ROLE}"
            " USING (true)",
        ]
    owned = []
    for name, (arguments, sql) in FUNCTIONS.items():
        signature = f"public.{name}({arguments})"
        statements += [
            sql,
            f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC",
            f"GRANT EXECUTE ON FUNCTION {signature} TO {APP_ROLE}",
        ]
        owned.append(f"ALTER FUNCTION {signature} OWNER TO {SEARCH_ROLE}")
    statements.append(_as_search_role(owned))
    _run(schema_editor, statements)


def drop(apps, schema_editor):
    dropped = [f"DROP FUNCTION IF EXISTS public.{n}({a})" for n, (a, _) in FUNCTIONS.items()]
    statements = [_as_search_role(dropped)]
    for table in SEARCHED:
        statements += [
            f"DROP POLICY IF EXISTS search_definer ON public.{table}",
            f"REVOKE SELECT ON public.{table} FROM {SEARCH_ROLE}",
        ]
    _run(schema_editor, statements)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_row_level_security"),
        ("conversations", "0012_drop_message_checkpoint_id"),
        ("knowledge", "0005_saved_questions"),
        ("memories", "0001_store"),
    ]

    operations = [migrations.RunPython(create, drop)]
