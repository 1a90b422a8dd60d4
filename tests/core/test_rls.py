"""Row-level security: the database shows a query only its user's rows, whatever the code asks.

Every test here takes the owner filter away on purpose (a raw `SELECT * FROM` each table,
`objects.all()`, a selector that forgets `created_by`) and checks what comes back.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction
from django.db.utils import DataError
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken, UserSettings
from accounts.tokens import authenticate_token, create_api_token
from conversations.models import (
    Attachment,
    Conversation,
    Message,
    MessageFeedback,
    Project,
    ReplyRun,
    Share,
)
from core import rls, rls_policies
from knowledge.models import Document, DocumentChunk
from memories import services as memories
from tests.conftest import require_service, uses_postgres
from transfers.models import ImportJob

pytestmark = [pytest.mark.django_db]

# The ORM half of "every table": each model whose table holds a user's rows.
MODELS = [
    ApiToken,
    UserSettings,
    Project,
    Conversation,
    Message,
    MessageFeedback,
    ReplyRun,
    Share,
    Attachment,
    Document,
    DocumentChunk,
    ImportJob,
]
SECRET = "alice-private-zebra"


@pytest.fixture(autouse=True)
def _postgres():
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")


def own_rows(user, tag: str) -> dict[str, object]:
    """One row of `user` in every protected table (as the maintenance role, like a fixture)."""
    project = Project.objects.create(owner=user, name=f"{tag} project")
    conversation = Conversation.objects.create(
        created_by=user, title=f"{tag} {SECRET}", project=project
    )
    message = Message.objects.create(
        conversation=conversation, role="user", content=f"{tag} {SECRET}", sequence_number=1
    )
    document = Document.objects.create(owner=user, title=f"{tag} doc", filename="d.txt", kind="txt")
    with rls.as_user(user.pk):  # the app's own services, in the user's scope
        token = create_api_token(user=user, name=f"{tag} token")
        memory = memories.add_memory(user_id=user.pk, text=f"{tag} {SECRET}")
    return {
        "accounts_apitoken": token.token,
        "accounts_usersettings": UserSettings.objects.create(user=user),
        "conversations_project": project,
        "conversations_conversation": conversation,
        "conversations_message": message,
        "conversations_messagefeedback": MessageFeedback.objects.create(
            user=user, message=message, rating="up"
        ),
        "conversations_replyrun": ReplyRun.objects.create(
            id=uuid.uuid4(), conversation=conversation, heartbeat_at=timezone.now()
        ),
        "conversations_share": Share.objects.create(
            conversation=conversation,
            created_by=user,
            token=secrets.token_urlsafe(24),
            message_ids=[str(message.pk)],
        ),
        "conversations_attachment": Attachment.objects.create(
            conversation=conversation,
            created_by=user,
            name="a.txt",
            kind="document",
            content_type="text/plain",
            size_bytes=1,
            file="attachments/a.txt",
        ),
        "knowledge_document": document,
        "knowledge_documentchunk": DocumentChunk.objects.create(
            document=document, owner=user, ordinal=0, text=f"{tag} {SECRET}"
        ),
        "transfers_importjob": ImportJob.objects.create(
            owner=user, skipped=[{"index": 0, "title": f"{tag} {SECRET}", "reason": "x"}]
        ),
        "store": memory,
    }


def raw_rows(table: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")  # no owner filter, on purpose
        return cursor.fetchall()


@pytest.fixture
def two_users(alice, bob):
    return own_rows(alice, "alice"), own_rows(bob, "bob")


def test_every_table_a_user_owns_is_protected():
    """A new model that points at a user (or at a user's conversation) must get a policy:
    a forgotten one fails here, not in production."""
    user_model = get_user_model()
    owned_models = {Conversation, Message, Document}
    exempt = {"django_admin_log", "auth_user_groups", "auth_user_user_permissions"}
    missing = []
    for model in apps.get_models(include_auto_created=True):
        table = model._meta.db_table
        targets = {f.related_model for f in model._meta.concrete_fields if f.is_relation}
        owns = user_model in targets or targets & owned_models
        if owns and table not in exempt and table not in rls_policies.OWNED:
            missing.append(table)
    assert missing == []
    assert set(rls_policies.OWNED) >= {m._meta.db_table for m in MODELS} | {"store"}


def test_the_app_role_cannot_bypass_rls_and_every_table_forces_it():
    with rls.using(rls.NOBODY), connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolname, rolsuper, rolbypassrls, rolinherit FROM pg_roles"
            " WHERE rolname = current_user"
        )
        # NOINHERIT: being allowed to switch to the maintenance role is not being it.
        assert cursor.fetchone() == (rls.APP_ROLE, False, False, False)
        cursor.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s) AND (rolsuper OR rolbypassrls)",
            [[rls.APP_ROLE, rls.MAINTENANCE_ROLE, rls.SHARE_ROLE]],
        )
        assert cursor.fetchone() == (0,)
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relname = ANY(%s)"
            " AND relrowsecurity AND relforcerowsecurity",
            [list(rls_policies.OWNED)],
        )
        assert {row[0] for row in cursor.fetchall()} == set(rls_policies.OWNED)


def test_without_the_owner_filter_bob_sees_none_of_alices_rows(alice, bob, two_users):
    mine, theirs = two_users
    with rls.as_user(bob.pk):
        for table in theirs:
            rows = raw_rows(table)
            assert rows, f"{table}: Bob sees his own row"
            assert all(SECRET not in repr(r) or "bob" in repr(r) for r in rows), table
            assert len(rows) == 1, f"{table}: Bob sees {len(rows)} rows, only his is his"
        for model in MODELS:
            ids = set(model.objects.all().values_list("pk", flat=True))
            table = model._meta.db_table
            assert ids == {theirs[table].pk}, f"{model.__name__}.objects.all() as Bob"
        assert [m.text for m in memories.list_memories(user_id=alice.pk)] == []
        # Asking with Alice's own ids changes nothing either.
        assert not Conversation.objects.filter(pk=mine["conversations_conversation"].pk).exists()
        assert Message.objects.filter(content__contains=SECRET).count() == 1  # his own


def test_with_no_user_set_the_database_shows_nothing(two_users):
    with rls.using(rls.NOBODY):
        for table in rls_policies.OWNED:
            assert raw_rows(table) == [], table
        for model in MODELS:
            assert model.objects.count() == 0, model.__name__


def test_a_row_cannot_be_written_into_someone_elses_name(alice, bob, two_users):
    mine, _ = two_users
    conversation = mine["conversations_conversation"]
    with rls.as_user(bob.pk):
        with pytest.raises(Exception, match="row-level security"), transaction.atomic():
            Conversation.objects.create(created_by=alice, title="forged")
        with pytest.raises(Exception, match="row-level security"), transaction.atomic():
            Message.objects.create(
                conversation_id=conversation.pk, role="user", content="x", sequence_number=9
            )
        # Updating or deleting Alice's rows touches nothing.
        assert Conversation.objects.filter(pk=conversation.pk).update(title="mine now") == 0
        assert Message.objects.filter(conversation_id=conversation.pk).delete()[0] == 0
    conversation.refresh_from_db()
    assert conversation.title.startswith("alice") and conversation.messages.count() == 1


def test_a_selector_that_forgets_the_owner_still_answers_404(
    monkeypatch, alice, bob, bob_client, two_users
):
    """The second wall over HTTP: with the owner filter taken out of the app's one access
    check, Bob still gets 404 for Alice's conversation (and his own still opens)."""
    from conversations import selectors

    monkeypatch.setattr(selectors, "owned_by", lambda user: Conversation.objects.all())
    mine, theirs = two_users
    alices = mine["conversations_conversation"].pk
    response = bob_client.get(f"/api/v1/conversations/{alices}")
    assert response.status_code == 404
    assert SECRET not in response.content.decode()
    assert bob_client.get(f"/api/v1/conversations/{alices}/messages").status_code == 404
    assert bob_client.get(f"/c/{alices}/").status_code == 404
    bobs = theirs["conversations_conversation"].pk
    assert bob_client.get(f"/api/v1/conversations/{bobs}").status_code == 200


def test_a_pool_of_one_connection_carries_no_user_from_one_to_the_next(
    transactional_db, alice, bob
):
    """Two users' work interleaved on the same pooled connection (pool size 1): each sees
    only its own rows, and nothing stays set on the connection between them."""
    from core.db.postgresql.base import DatabaseWrapper

    with rls.maintenance():
        Conversation.objects.create(created_by=alice, title="alice-1")
        Conversation.objects.create(created_by=bob, title="bob-1")
    params = {**connection.settings_dict, "OPTIONS": {"pool": {"min_size": 1, "max_size": 1}}}
    # Two workers (as two threads would be), one pool of one connection (the pool is the
    # alias's, as in production).
    workers = [DatabaseWrapper(params, alias="rls_pool") for _ in range(2)]

    def titles(worker) -> list[str]:
        with worker.cursor() as cursor:
            cursor.execute("SELECT title FROM conversations_conversation ORDER BY title")
            return [row[0] for row in cursor.fetchall()]

    def leftover(worker) -> tuple:
        # psycopg's own cursor: what the connection holds between transactions.
        with worker.connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_user, current_setting('app.user_id', true),"
                " current_setting('app.token_hash', true)"
            )
            return cursor.fetchone()

    try:
        pids = set()
        for turn in range(3):
            for worker, user, expected in (
                (workers[0], alice, ["alice-1"]),
                (workers[1], bob, ["bob-1"]),
            ):
                connections["rls_pool"] = worker
                with rls.as_user(user.pk):
                    assert titles(worker) == expected  # autocommit: a transaction of its own
                    worker.set_autocommit(False)  # an atomic-like transaction, then rolled back
                    assert titles(worker) == expected
                    if turn == 1:
                        with pytest.raises(DataError), worker.cursor() as cursor:
                            cursor.execute("SELECT 1/0")
                    worker.rollback()
                    worker.set_autocommit(True)
                assert leftover(worker) == (rls.APP_ROLE, "", "")
                with rls.using(rls.NOBODY):
                    assert titles(worker) == []
                pids.add(worker.connection.info.backend_pid)
                worker.close()  # back to the pool of one
        assert len(pids) == 1  # the same server connection all along
        connections["rls_pool"] = workers[0]
        with rls.maintenance():
            assert titles(workers[0]) == ["alice-1", "bob-1"]
            workers[0].close()
    finally:
        for worker in workers:
            worker.close()
        workers[0].close_pool()
        del connections["rls_pool"]


def test_scopes_hold_inside_one_transaction_and_after_a_rolled_back_savepoint(alice, bob):
    with rls.maintenance():
        Conversation.objects.create(created_by=alice, title="a")
        Conversation.objects.create(created_by=bob, title="b")
    with transaction.atomic(), rls.as_user(alice.pk):
        assert list(Conversation.objects.values_list("title", flat=True)) == ["a"]
        try:
            with transaction.atomic(), rls.as_user(bob.pk):
                assert list(Conversation.objects.values_list("title", flat=True)) == ["b"]
                raise RuntimeError
        except RuntimeError:
            pass
        with rls.as_user(bob.pk):
            assert list(Conversation.objects.values_list("title", flat=True)) == ["b"]
        assert list(Conversation.objects.values_list("title", flat=True)) == ["a"]
        # A savepoint taken as Alice, Bob's scope applied after it, the rollback to it made
        # by work that has no user: that work still sees nothing (the rollback brought
        # Alice's setting back; the next statement sets its own scope again).
        sid = transaction.savepoint()
        with rls.as_user(bob.pk):
            assert Conversation.objects.count() == 1
        with rls.using(rls.NOBODY):
            transaction.savepoint_rollback(sid)
            assert Conversation.objects.count() == 0


def test_a_token_is_found_by_its_secret_only(alice, bob):
    with rls.as_user(alice.pk):
        issued = create_api_token(user=alice, name="cli")
    with rls.as_user(bob.pk):
        create_api_token(user=bob, name="bob's")
    found = authenticate_token(f"Bearer {issued.secret}")
    assert found is not None and found.owner_id == alice.pk
    from accounts.tokens import hash_secret

    with rls.bearer(hash_secret(issued.secret)):
        assert list(ApiToken.objects.values_list("name", flat=True)) == ["cli"]
    with rls.bearer(hash_secret(issued.secret + "x")):
        assert ApiToken.objects.count() == 0
    assert authenticate_token(f"Bearer {issued.secret}x") is None


def test_a_share_link_reads_its_snapshot_and_nothing_else(alice, bob, two_users, client):
    mine, _ = two_users
    conversation = mine["conversations_conversation"]
    share = mine["conversations_share"]
    Message.objects.create(
        conversation=conversation, role="assistant", content="after the share", sequence_number=2
    )
    with rls.share_reader(share.token):
        contents = Message.objects.order_by("sequence_number").values_list("content", flat=True)
        assert list(contents) == [f"alice {SECRET}"]
        assert list(Share.objects.values_list("pk", flat=True)) == [share.pk]
        with pytest.raises(Exception, match="permission denied"), transaction.atomic():
            list(Conversation.objects.all())
    with rls.share_reader("not-a-real-token-at-all"):
        assert Message.objects.count() == 0
    page = client.get(f"/s/{share.token}/")
    assert page.status_code == 200
    assert SECRET in page.content.decode() and "after the share" not in page.content.decode()


def test_staff_see_everyone_in_the_admin_and_only_their_own_elsewhere(make_user, two_users):
    staff = make_user("moderator", is_staff=True, is_superuser=True)
    with rls.maintenance():
        Conversation.objects.create(created_by=staff, title="staff's own")
    c = Client()
    c.force_login(staff)
    page = c.get("/admin/conversations/conversation/").content.decode()
    assert "alice" in page and "bob" in page and "staff&#x27;s own" in page
    listing = c.get("/api/v1/conversations").json()
    assert [item["title"] for item in listing["items"]] == ["staff's own"]


def test_the_checkpoint_tables_are_the_agent_runtimes_only(transactional_db):
    """The agent's checkpoints are on its own connection (CHECKPOINT_URL, the login): the
    app role is granted nothing on them."""
    from agent.checkpoint import close_checkpointer, open_checkpointer
    from tests.conftest import database_url_for_subprocesses

    async def make_tables() -> None:
        await close_checkpointer(await open_checkpointer(database_url_for_subprocesses()))

    asyncio.run(make_tables())
    with connection.cursor() as cursor:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cursor.execute(
                "SELECT has_table_privilege(%s, %s, 'SELECT'),"
                " has_table_privilege(%s, %s, 'SELECT')",
                [rls.APP_ROLE, table, rls.MAINTENANCE_ROLE, table],
            )
            assert cursor.fetchone() == (False, False), table


def test_dumpdata_is_maintenance_work_and_dumps_every_user(two_users):
    """An operator's backup with `dumpdata` must not come out silently empty."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    with rls.using(rls.NOBODY):  # as a shell would start: no user
        call_command("dumpdata", "conversations.conversation", stdout=out)
    titles = {row["fields"]["title"] for row in json.loads(out.getvalue())}
    assert titles == {f"alice {SECRET}", f"bob {SECRET}"}
