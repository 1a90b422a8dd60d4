"""Fuzz the whole JSON API through a real Daphne process, as two users (schemathesis).

Every operation of /api/v1/openapi.json is called with generated data (valid and not),
the agent-running ones included (against the fake model server), then in stateful
sequences that reuse real ids from earlier answers (create → read → update → delete).
Asserted on every answer: no 5xx; every error is SPEC's JSON error shape; and whatever
Alice can reach by id, Bob gets 404 for (the same request with his token).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections import Counter, defaultdict

import hypothesis
import pytest
import requests
import schemathesis
from django.conf import settings
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st

from accounts.tokens import create_api_token
from conversations import services
from conversations.projects import create_project
from knowledge.services import upload_document
from tests.conftest import require_service, uses_postgres
from tests.support import seed
from tests.support.daphne import start_daphnes, stop
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 12  # per operation, stateless
STATEFUL_EXAMPLES = 25  # sequences of calls
STEPS = 8  # calls per sequence
ID_PATH = re.compile(r"\{[a-z_]*id\}")


@pytest.fixture
def live_api(tmp_path, alice, bob):
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    require_service(bool(settings.REDIS_URL), "Redis (set REDIS_URL)")
    server = FakeOpenAI(lambda body: Reply(text="A short answer.")).start()
    procs, (port,) = start_daphnes(
        tmp_path, server.base_url, settings.REDIS_URL, count=1, CHAT_RATE_LIMIT="100000/m"
    )
    conversation = services.create_conversation(user=alice, title="Seed 회의")
    messages = [
        seed.add_message(
            conversation_id=conversation.id, role="assistant" if n else "user", content=text
        )
        for n, text in enumerate(["hello 회의가", "world"])
    ]
    project = create_project(user=alice, name="Seed project")
    document = upload_document(user=alice, filename="seed.md", data=b"# Seed\n\nper diem 87")
    # Real ids of Alice's, put into generated requests half of the time.
    real_ids = {
        "conversation_id": [str(conversation.id)],
        "message_id": [str(m.id) for m in messages],
        "project_id": [project.id],
        "document_id": [str(document.id)],
    }
    tokens = {
        "alice": create_api_token(user=alice, name="fuzz").secret,
        "bob": create_api_token(user=bob, name="fuzz").secret,
    }
    seen: dict[str, Counter] = defaultdict(Counter)  # operation → answers by class (2, 4…)
    try:
        yield {
            "base": f"http://127.0.0.1:{port}",
            "tokens": tokens,
            "seen": seen,
            "ids": real_ids,
            "failures": [],
        }
    finally:
        stop(procs)
        server.stop()


def _auth(live, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {live['tokens'][who]}"}


def _check(live, case, response) -> None:
    """The three promises, for one answer to Alice (and the same request as Bob)."""
    try:
        _promises(live, case, response)
    except AssertionError as exc:  # kept even if hypothesis cannot replay the run
        live["failures"].append(str(exc)[:500])
        raise


def _promises(live, case, response) -> None:
    where = f"{case.method} {case.formatted_path}"
    live["seen"][f"{case.method} {case.path}"][response.status_code // 100] += 1
    assert response.status_code < 500, (where, response.text[:500])
    if response.status_code >= 400:
        kind = response.headers.get("content-type") or [""]
        kind = kind[0] if isinstance(kind, list) else kind
        assert kind.startswith("application/json"), (
            where,
            response.status_code,
            kind,
            case.as_curl_command()[:1500],
        )
        body = response.json()
        assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), where
    if response.status_code < 300 and ID_PATH.search(case.path):
        stranger = case.call(headers=_auth(live, "bob"))
        assert stranger.status_code == 404, (where, "as Bob", stranger.status_code)


def _load(live) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{live['base']}/api/v1/openapi.json")


def _fuzz(live, operation) -> None:
    @hypothesis.given(case=operation.as_strategy(), data=st.data())
    @hypothesis.settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def call(case, data):
        for name in list(case.path_parameters or {}):
            if name in live["ids"] and data.draw(st.booleans(), label=f"real {name}"):
                case.path_parameters[name] = data.draw(st.sampled_from(live["ids"][name]))
        _check(live, case, case.call(headers=_auth(live, "alice"), timeout=60))

    call()


def test_every_operation_with_generated_input(live_api):
    failures: list[str] = []
    operations = [result.ok() for result in _load(live_api).get_all_operations()]
    # Deletes last: they would take the real ids away from everything after them.
    operations.sort(key=lambda op: (op.method.upper() == "DELETE", op.path, op.method))
    for operation in operations:
        try:
            _fuzz(live_api, operation)
        except AssertionError as exc:  # keep going: report every operation that fails
            failures.append(f"{operation.label}: {exc}")
    assert failures == []
    seen = live_api["seen"]
    print({op: dict(answers) for op, answers in sorted(seen.items())})
    assert len(seen) >= 25  # every operation was called
    assert seen["POST /api/v1/conversations/{conversation_id}/messages"][2]  # a reply ran


def test_sequences_that_reuse_real_ids(live_api):
    schema = _load(live_api)

    class Workflow(schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"headers": _auth(live_api, "alice"), "timeout": 60}

        def validate_response(self, response, case, **kwargs):
            _check(live_api, case, response)

    run = functools.partial(
        Workflow.run,
        settings=hypothesis.settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=STEPS,
            # The server's state changes between runs, so a replay is not the same run:
            # report the first failure as found instead of shrinking it.
            phases=[Phase.explicit, Phase.generate],
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            database=None,
        ),
    )
    # The rules open at a step depend on what the live server answered before, so
    # hypothesis may find its tree of choices inconsistent and stop exploring. Not a
    # failure of the API: every failed promise is recorded by _check and asserted below.
    with contextlib.suppress(hypothesis.errors.FlakyStrategyDefinition):
        run()
    assert live_api["failures"] == []
    by_id = {op: n for op, n in live_api["seen"].items() if ID_PATH.search(op) and n[2]}
    print({op: dict(answers) for op, answers in sorted(live_api["seen"].items())})
    assert by_id, "no call reused an id from an earlier answer"


def test_the_schema_documents_the_import_file(live_api):
    schema = requests.get(f"{live_api['base']}/api/v1/openapi.json", timeout=30).json()
    body = schema["paths"]["/api/v1/conversations/import"]["post"]["requestBody"]
    fields = body["content"]["application/json"]["schema"]["properties"]
    assert {"format", "version", "conversation", "messages"} <= set(fields)
    assert json.dumps(fields["messages"])  # inlined, no dangling $ref
