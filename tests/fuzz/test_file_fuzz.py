"""Fuzz the import and the document upload with generated files (hypothesis).

Export files close to valid ones, with values at the edges (times of year 1 and 9999
with any offset, huge and non-finite numbers, NUL, lone surrogates, deep nesting, long
strings), and documents of any text: each answers 201 or a 4xx in the error shape, a
refused one stores nothing, and the account stays usable (list, open, export, delete).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.tokens import create_api_token
from conversations.models import Conversation
from knowledge.models import Document

pytestmark = pytest.mark.django_db

API = "/api/v1"
EXAMPLES = 80
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)

edge_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", "\x00", "a\x00", "\ud800", "\udfff x", "\u202e", "회의가", "x" * 70_000]),
)
# Fixed offsets only (no time-zone database needed), up to what Python allows.
offsets = st.timedeltas(
    min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
)
edge_times = st.one_of(
    st.builds(
        lambda moment, offset: moment.replace(tzinfo=timezone(offset)).isoformat(),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)),
        offsets,
    ),
    st.datetimes(min_value=datetime(1, 1, 1)).map(datetime.isoformat),
    st.sampled_from(["9999-12-31T23:59:59-14:00", "0001-01-01T00:30:00+05:00", "yesterday"]),
    st.none(),
    edge_text,
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | edge_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(edge_text, inner, max_size=3),
    max_leaves=10,
)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


deep = st.integers(min_value=1, max_value=500).map(_nested)


@st.composite
def export_files(draw):
    messages = []
    for n in range(draw(st.integers(min_value=0, max_value=4))):
        message = {
            "sequence_number": draw(st.one_of(st.just(n + 1), numbers)),
            "role": draw(st.sampled_from(["user", "assistant", "system", "wizard"])),
            "content": draw(edge_text),
            "parts": draw(st.one_of(st.just([]), st.lists(json_values, max_size=2))),
            "created_at": draw(edge_times),
        }
        if draw(st.booleans()):
            message["metadata"] = draw(st.one_of(json_values, deep))
        if draw(st.booleans()):
            message["tokens_used"] = draw(numbers)
        if draw(st.booleans()):
            message["finish_reason"] = draw(st.sampled_from(["end_turn", "boom", None]))
        messages.append(message)
    conversation = {"title": draw(edge_text), "summary_at": draw(edge_times)}
    if draw(st.booleans()):
        conversation[draw(edge_text)] = draw(json_values)
    return {
        "format": draw(st.sampled_from(["chatsite.conversation", "chatsite.conversation", "x"])),
        "version": draw(st.sampled_from([1, 1, 2])),
        "conversation": conversation,
        "messages": messages,
    }


@pytest.fixture
def api_client(alice):
    token = create_api_token(user=alice, name="fuzz").secret
    return Client(headers={"Authorization": f"Bearer {token}"})


def _usable(client: Client) -> None:
    listing = client.get(f"{API}/conversations")
    assert listing.status_code == 200
    for item in listing.json()["items"]:
        conversation_id = item["id"]
        assert client.get(f"{API}/conversations/{conversation_id}").status_code == 200
        assert client.get(f"{API}/conversations/{conversation_id}/messages").status_code == 200
        export = client.get(f"{API}/conversations/{conversation_id}/export", {"format": "json"})
        assert export.status_code == 200
        b"".join(export)
        assert client.delete(f"{API}/conversations/{conversation_id}").status_code == 204


@given(export=export_files(), nesting=st.sampled_from([0, 0, 0, 100_000]))
@FUZZ
def test_any_import_is_201_or_400_and_the_account_stays_usable(api_client, export, nesting):
    raw = json.dumps(export, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")
    if nesting:  # deeper than any JSON parser recurses
        raw = raw[:-1] + b',"x":' + b"[" * nesting + b"]" * nesting + b"}"
    before = Conversation.objects.count()
    response = api_client.post(f"{API}/conversations/import", raw, content_type="application/json")
    assert response.status_code in (201, 400, 413), response.content[:300]
    if response.status_code != 201:
        assert response.json()["error"]["code"] in ("invalid_import", "too_long")
        assert Conversation.objects.count() == before
    _usable(api_client)


@given(
    name=st.text(min_size=1, max_size=30).map(lambda n: n.replace("/", "_")),
    ext=st.sampled_from([".md", ".txt", ".pdf", ".exe", ""]),
    body=st.one_of(
        st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=500),
        st.integers(min_value=1, max_value=20_000).map(lambda n: b"# h\n" * n),
        st.integers(min_value=1, max_value=5_000).map(lambda n: b"```\n# x\n" * n),
    ),
)
@FUZZ
def test_any_upload_is_201_or_4xx_and_documents_stay_listable(api_client, name, ext, body):
    before = Document.objects.count()
    upload = SimpleUploadedFile(name + ext, body)
    response = api_client.post(f"{API}/documents", {"file": upload})
    assert response.status_code in (201, 400, 413, 422), response.content[:300]
    if response.status_code != 201:
        assert response.json()["error"]["code"]
        assert Document.objects.count() == before
    listing = api_client.get(f"{API}/documents")
    assert listing.status_code == 200
    for item in listing.json()["items"]:
        assert api_client.get(f"{API}/documents/{item['id']}").status_code == 200
        assert api_client.delete(f"{API}/documents/{item['id']}").status_code == 204
