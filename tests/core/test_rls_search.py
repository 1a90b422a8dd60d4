"""Text search under row-level security: it keeps its indexes, and the wall stays.

Under forced RLS the planner may put only LEAKPROOF operators ahead of a policy, so as the
app role a full-text (`@@`) or trigram (`ILIKE`) match cannot use its GIN index. Every
search the app runs therefore goes through a function of core/migrations/0002 that searches
as `chat_search` and applies the owner filter itself, from the scope. These tests check that
Bob's scope finds none of Alice's rows through any of them (also when the app asks with
Alice's id), and that the plans, as the app role, start from the GIN indexes.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from django.db import connection

from conversations import search
from conversations.models import Conversation, Message
from conversations.replies import recall
from conversations.tree import Tree
from core import rls
from knowledge.models import Document, DocumentChunk
from knowledge.retrieval import retrieve
from tests.conftest import require_service, uses_postgres

pytestmark = [pytest.mark.django_db]

WORD = "zebrafinch"
FUNCTIONS = {
    "knowledge_chunk_matches",
    "conversations_message_matches",
    "conversations_recall_matches",
}
SEARCHED = {"knowledge_documentchunk", "conversations_message", "conversations_conversation"}


@pytest.fixture(autouse=True)
def _postgres():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")


def own_searchables(user, tag: str, *, filler: int = 0) -> dict[str, object]:
    """A document and a conversation of `user` that hold WORD (as the maintenance role),
    with `filler` more chunks and messages that do not."""
    document = Document.objects.create(owner=user, title=f"{tag} doc", filename="d.txt", kind="txt")
    chunks = [
        DocumentChunk(
            document=document,
            owner=user,
            ordinal=0,
            heading=f"{tag} policy",
            text=f"{tag}: the {WORD} budget is reviewed every spring.",
        )
    ]
    chunks += [
        DocumentChunk(
            document=document,
            owner=user,
            ordinal=n,
            heading=f"section {n % 97}",
            text=f"{tag} clause {n}: note{n % 4001} about item{n % 3001} and the budget.",
        )
        for n in range(1, filler + 1)
    ]
    DocumentChunk.objects.bulk_create(chunks, batch_size=2000)
    conversation = Conversation.objects.create(created_by=user, title=f"{tag} chat")
    messages = [
        Message(
            conversation=conversation,
            role="user" if n % 2 else "assistant",
            content=f"{tag} message {n}: note{n % 4001} about item{n % 3001}.",
            sequence_number=n,
        )
        for n in range(1, filler + 1)
    ]
    said = Message(
        conversation=conversation,
        role="user",
        content=f"{tag}: my {WORD} is called Bori.",
        sequence_number=filler + 1,
    )
    Message.objects.bulk_create([*messages, said], batch_size=2000)
    return {"document": document, "conversation": conversation, "message": said}


@pytest.fixture
def searchables(alice, bob):
    return own_searchables(alice, "alice"), own_searchables(bob, "bob")


def function_rows(sql: str, params: list[object]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def test_bob_finds_none_of_alices_rows_through_any_search(
    monkeypatch, alice, bob, searchables, bob_client
):
    mine, theirs = searchables
    with rls.as_user(bob.pk):
        # Documents: Bob's own chunk only; asked with Alice's id, nothing.
        found = retrieve(user_id=bob.pk, query=f"{WORD} budget", k=5)
        assert {hit["document_id"] for hit in found} == {str(theirs["document"].pk)}
        assert retrieve(user_id=alice.pk, query=f"{WORD} budget", k=5) == []
        # Message search and the list's q.
        hits = search.search_messages(user=bob, q=WORD).items
        assert [h.message_id for h in hits] == [str(theirs["message"].pk)]
        assert search.search_messages(user=alice, q=WORD).items == []
        listed = search.list_conversations(user=bob, q=WORD).items
        assert [c.pk for c in listed] == [theirs["conversation"].pk]
        assert search.list_conversations(user=alice, q=WORD).items == []
        # The agent's search of other conversations.
        found = search.search_other_conversations(
            user_id=bob.pk, query=WORD, exclude_conversation_id=uuid.uuid4()
        )
        assert [f["conversation_id"] for f in found] == [str(theirs["conversation"].pk)]
        assert (
            search.search_other_conversations(
                user_id=alice.pk, query=WORD, exclude_conversation_id=uuid.uuid4()
            )
            == []
        )
        # Recall of older messages: Bob's conversation recalls; Alice's recalls nothing,
        # even with a branch that (by a bug) names her message.
        for tag, conversation, message, expected in (
            ("bob", theirs["conversation"], theirs["message"], 1),
            ("alice", mine["conversation"], mine["message"], 0),
        ):
            monkeypatch.setattr(
                recall.Tree, "of", lambda _, since=None, m=message: Tree({m.pk: None}, {})
            )
            recalled = recall.recall_branch_messages(
                conversation_id=conversation.pk,
                leaf_id=message.pk,
                query=f"What is my {WORD} called?",
                present="",
                exclude_ids=[],
            )
            assert len(recalled) == expected, tag
        monkeypatch.undo()
        # The functions themselves: only Bob's rows, whatever is asked.
        chunk_ids = function_rows(
            "SELECT id FROM knowledge_chunk_matches(%s, NULL, '{}', 100, 100)", [f"{WORD}:*"]
        )
        assert {row[0] for row in chunk_ids} == set(
            DocumentChunk.objects.filter(text__contains=WORD).values_list("pk", flat=True)
        )
        assert len(chunk_ids) == 1
        matches = function_rows(
            "SELECT id, conversation_id FROM conversations_message_matches(%s, %s)",
            [["%"], [None]],  # every message: still only Bob's
        )
        assert {row[1] for row in matches} == {theirs["conversation"].pk}
        assert (
            function_rows(
                "SELECT id FROM conversations_recall_matches(%s, NULL, %s, 100)",
                [mine["conversation"].pk, ["%"]],
            )
            == []
        )
    # Over HTTP, as the app runs (the request's scope).
    for path in (f"/api/v1/search/messages?q={WORD}", f"/api/v1/conversations?q={WORD}"):
        body = bob_client.get(path).content.decode()
        assert "bob" in body and "alice" not in body, path
    body = bob_client.get(f"/api/v1/search/documents?q={WORD}").content.decode()
    assert "bob" in body and "alice" not in body


def test_with_no_user_set_the_search_functions_find_nothing(searchables):
    with rls.using(rls.NOBODY):
        assert (
            function_rows(
                "SELECT id FROM knowledge_chunk_matches(%s, NULL, '{}', 100, 100)", [f"{WORD}:*"]
            )
            == []
        )
        assert (
            function_rows("SELECT id FROM conversations_message_matches(%s, %s)", [["%"], [None]])
            == []
        )


def test_the_search_functions_run_as_a_role_that_only_reads(searchables):
    """Their role: no login, nobody a member, SELECT on the searched tables only, a policy
    for reading only; the functions: SECURITY DEFINER, search_path pinned, callable by the
    app role alone (not the share role, not PUBLIC)."""
    with rls.using(rls.NOBODY), connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s",
            [rls.SEARCH_ROLE],
        )
        assert cursor.fetchone() == (False, False, False)
        cursor.execute(
            "SELECT member::regrole::text FROM pg_auth_members WHERE roleid = %s::regrole",
            [rls.SEARCH_ROLE],
        )
        assert cursor.fetchall() == []  # not the app role, nor the migrating login
        cursor.execute(
            "SELECT c.relname, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a"
            " WHERE a.grantee = %s::regrole",
            [rls.SEARCH_ROLE],
        )
        assert set(cursor.fetchall()) == {(table, "SELECT") for table in SEARCHED}
        cursor.execute(
            "SELECT tablename, cmd FROM pg_policies WHERE %s = ANY(roles)", [rls.SEARCH_ROLE]
        )
        assert set(cursor.fetchall()) == {(table, "SELECT") for table in SEARCHED}
        cursor.execute(
            "SELECT proname, prosecdef, pg_get_userbyid(proowner), proconfig,"
            " has_function_privilege(%s, p.oid, 'EXECUTE'),"
            " has_function_privilege(%s, p.oid, 'EXECUTE'),"
            " has_function_privilege('public', p.oid, 'EXECUTE')"
            " FROM pg_proc p WHERE proname = ANY(%s)",
            [rls.APP_ROLE, rls.SHARE_ROLE, list(FUNCTIONS)],
        )
        rows = cursor.fetchall()
    assert {row[0] for row in rows} == FUNCTIONS
    for name, definer, owner, config, app, share, public in rows:
        assert definer and owner == rls.SEARCH_ROLE, name
        assert "search_path=pg_catalog, public, pg_temp" in config, name
        assert (app, share, public) == (True, False, False), name


@contextlib.contextmanager
def nested_plans() -> Iterator[list[str]]:
    """Collect the plans of the statements run in the block, those inside functions too,
    as the server runs them (auto_explain, sent to this client). Needs the login to be a
    superuser (CI's); only for this test's transaction."""
    raw = connection.connection
    plans: list[str] = []

    def collect(diagnostic) -> None:
        if diagnostic.severity_nonlocalized == "LOG" and "plan:" in (
            diagnostic.message_primary or ""
        ):
            plans.append(diagnostic.message_primary)

    with raw.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = session_user")
        if not cursor.fetchone()[0]:
            pytest.skip("auto_explain needs a superuser login")
        cursor.execute("SET LOCAL ROLE NONE")  # the login, to load auto_explain
        cursor.execute("LOAD 'auto_explain'")
        cursor.execute("SET LOCAL auto_explain.log_min_duration = 0")
        cursor.execute("SET LOCAL auto_explain.log_nested_statements = on")
        cursor.execute("SET LOCAL client_min_messages = log")
    connection.rls_applied = None  # the next statement sets the scope (and role) again
    raw.add_notice_handler(collect)
    try:
        yield plans
    finally:
        raw.remove_notice_handler(collect)
        with raw.cursor() as cursor:
            cursor.execute("SET LOCAL ROLE NONE")
            cursor.execute("SET LOCAL auto_explain.log_min_duration = -1")
            cursor.execute("SET LOCAL client_min_messages = notice")
        connection.rls_applied = None


def settle(tables: set[str]) -> None:
    """Bring the tables to where autovacuum keeps them: rows just inserted sit in their GIN
    indexes' pending lists (which every search reads whole, and the planner prices so), and
    they have no statistics yet."""
    with connection.connection.cursor() as cursor:
        cursor.execute("SET LOCAL ROLE NONE")  # the tables' owner's work
        cursor.execute(
            "SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
            " WHERE a.amname = 'gin' AND i.indrelid::regclass::text = ANY(%s)",
            [list(tables)],
        )
        for table in tables:
            cursor.execute(f"ANALYZE {table}")
    connection.rls_applied = None


def plans_of(plans: list[str], marker: str) -> str:
    """The plan (one of `plans`) whose query text holds `marker`."""
    found = [plan for plan in plans if marker in plan]
    assert found, (marker, plans)
    return "\n".join(found)


def test_every_search_starts_from_its_gin_index_as_the_app_role(make_user, alice, bob):
    """Bob holds 20,000 chunks and 20,000 messages, ten others 1,500 each: as the app
    role, in Bob's scope, each search's own statement (inside its function) starts from the
    GIN index of `search_vector` (and pg_trgm's), where the same query asked directly under
    RLS walks all of Bob's rows through the owner index and tests each."""
    own = {bob.pk: own_searchables(bob, "bob", filler=20_000)}
    for user in [alice] + [make_user(f"filler{n}") for n in range(9)]:
        own[user.pk] = own_searchables(user, user.username, filler=300)
    settle(SEARCHED)
    with rls.as_user(bob.pk):
        with connection.cursor() as cursor:  # the trap, for contrast: the direct query
            cursor.execute(
                "EXPLAIN SELECT id FROM knowledge_documentchunk WHERE owner_id = %s"
                " AND search_vector @@ to_tsquery('simple', %s)",
                [bob.pk, f"{WORD}:*"],
            )
            direct = "\n".join(row[0] for row in cursor.fetchall())
        assert "chunk_search_vector" not in direct, direct
        with nested_plans() as plans:
            assert len(retrieve(user_id=bob.pk, query=WORD, k=3)) == 1
            assert len(search.search_messages(user=bob, q=WORD).items) == 1
            assert len(search.list_conversations(user=bob, q=WORD).items) == 1
            conversation, message = own[bob.pk]["conversation"], own[bob.pk]["message"]
            recalled = recall.recall_branch_messages(
                conversation_id=conversation.pk,
                leaf_id=message.pk,
                query=f"What is my {WORD} called?",
                present="",
                exclude_ids=[],
            )
            assert len(recalled) == 1
    chunks = plans_of(plans, "FROM public.knowledge_documentchunk")
    assert "Bitmap Index Scan on chunk_search_vector" in chunks, chunks
    messages = plans_of(plans, "SELECT m.id, m.conversation_id")
    assert "Bitmap Index Scan on message_search_vector" in messages, messages
    assert "Bitmap Index Scan on message_content_trgm" in messages, messages
    recent = plans_of(plans, "m.conversation_id = $1")
    assert "Bitmap Index Scan on message_search_vector" in recent, recent
    # Neither table read whole, nor Bob's chunks walked through the owner index.
    for plan in (chunks, messages, recent):
        for table in ("knowledge_documentchunk", "conversations_message"):
            assert f"Seq Scan on {table}" not in plan, plan
    assert "owner_id_" not in chunks and "chunk_owner_document" not in chunks, chunks
