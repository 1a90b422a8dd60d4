"""Fuzz the conversation socket with arbitrary frames (hypothesis).

The client frames are read off the frame union (`conversations/realtime/frames.py`):
every field of every frame is set, one at a time, to hostile values (NUL, lone
surrogates, huge strings, wrong types, huge and non-finite numbers, nested JSON, ids of
other users' or missing messages) while the frame's other fields are valid; besides,
any JSON value, JSON-looking text and raw bytes. For every frame the socket answers with
server frame types only (and known error codes), never closes (no 1011), stores nothing
for a frame it refused, and still answers `ping` afterwards.
"""

from __future__ import annotations

import asyncio
import functools
import json
import types
import uuid
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from asgiref.sync import sync_to_async
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from accounts.tokens import create_api_token
from conversations import attachments, services
from conversations.consumers import ConversationConsumer
from conversations.models import Attachment, Conversation, Message, ReplyRun
from conversations.realtime.frames import (
    CLIENT_FRAME,
    CLIENT_FRAME_TYPES,
    CLIENT_FRAMES,
    SERVER_FRAME_TYPES,
    ErrorCode,
)
from tests.realtime.conftest import open_socket
from tests.support import seed
from tests.support.fake_turn import FakeAgent

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 300
ERROR_CODES = set(get_args(ErrorCode))
# Placeholders for message ids, replaced per example once the rows exist.
OWN_QUESTION, OWN_REPLY = "@own-question", "@own-reply"
OWN_ELSEWHERE, BOBS, MISSING = "@own-elsewhere", "@bobs", "@missing"
OWN_FILE, OWN_FILE_ELSEWHERE, BOBS_FILE = "@own-file", "@own-file-elsewhere", "@bobs-file"
IDS = (OWN_QUESTION, OWN_REPLY, OWN_ELSEWHERE, BOBS, MISSING)
FILE_IDS = (OWN_FILE, OWN_FILE_ELSEWHERE, BOBS_FILE, OWN_QUESTION, MISSING)
OWN_ID = str(uuid.UUID(int=1))

# --- hostile values, by the kind of value a field takes ---------------------------------
DEEP = functools.reduce(lambda inner, n: [inner] if n % 2 else {"k": inner}, range(40), "deep")
hostile_strings = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "a\x00b",
            "\ud800",
            "x\udfffy",
            "\u202e",
            "회의가",
            "x" * 33_000,  # over MESSAGE_MAX_CHARS
            "x" * 300_000,  # over the frame limit
            "4111 1111 1111 1111",  # sensitive: refused unless confirmed
            "not-a-uuid",
            str(uuid.UUID(int=0)),
            *IDS,
            *FILE_IDS,
        ]
    ),
)
wrong_types = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, [], {}, DEEP, {"$ne": None}, ["a"] * 11]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([2**31, 2**31 - 1, 2**63, -(2**63) - 1, 10**400]),
)


def _base_types(annotation: Any) -> list[Any]:
    """The plain types a field annotation takes (Annotated and unions unwrapped)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _base_types(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in get_args(annotation) for t in _base_types(arg)]
    return [annotation]


def _valid_values(name: str, field: FieldInfo) -> list[Any]:
    """Values the field accepts (ids are the example's own messages)."""
    if name == "message_id":
        return [OWN_REPLY, OWN_QUESTION]
    kinds = _base_types(field.annotation)
    if str in kinds:
        return ["hello", "회의가 있어요"]
    if bool in kinds:
        return [False, True]
    if int in kinds:
        return [0, 1, 100]
    if any(get_origin(kind) is list for kind in kinds):
        return [[], [OWN_FILE]]
    raise AssertionError(f"no valid value for {name}: {field.annotation}")


def _fields(model: type) -> dict[str, FieldInfo]:
    return {name: field for name, field in model.model_fields.items() if name != "type"}


def _valid_frame(model: type) -> dict[str, Any]:
    """The simplest valid frame of `model` (its type and required fields)."""
    kind = CLIENT_FRAME_TYPES[CLIENT_FRAMES.index(model)]
    required = {n: _valid_values(n, f)[0] for n, f in _fields(model).items() if f.is_required()}
    return {"type": kind, **required}


def _hostile_value(name: str, field: FieldInfo) -> st.SearchStrategy[Any]:
    """Values the field should refuse, or accept harmlessly (wrong types, edge values)."""
    kinds = _base_types(field.annotation)
    options: list[st.SearchStrategy[Any]] = [wrong_types, hostile_strings]
    if int in kinds:
        options.append(st.sampled_from(["5", 5.0, -(2**31), 2**31, True]))
    if bool in kinds:
        options.append(st.sampled_from([1, 0, "true", "false", "yes"]))
    if any(get_origin(kind) is list for kind in kinds):
        options.append(st.lists(st.one_of(hostile_strings, wrong_types), max_size=12))
        options.append(st.lists(st.sampled_from(FILE_IDS), min_size=1, max_size=3))
    return st.one_of(options)


def _frames_of(model: type) -> st.SearchStrategy[dict[str, Any]]:
    """Frames of `model`: valid ones, and each field in turn hostile (the others valid)."""
    fields = _fields(model)
    valid = st.fixed_dictionaries(
        {
            name: st.sampled_from(_valid_values(name, fields[name]))
            if name in fields
            else st.just(v)
            for name, v in _valid_frame(model).items()
        }
    )
    variants = [valid]
    for name, field in fields.items():
        variants.append(
            st.builds(
                lambda frame, value, name=name: {**frame, name: value},
                valid,
                _hostile_value(name, field),
            )
        )
        if field.is_required():  # …and missing
            variants.append(valid.map(lambda frame, name=name: _without(frame, name)))
    variants.append(st.builds(lambda frame, key: {key: 1, **frame}, valid, hostile_strings))
    return st.one_of(variants)


def _without(frame: dict[str, Any], name: str) -> dict[str, Any]:
    return {key: value for key, value in frame.items() if key != name}


FIELD_FRAMES = {model: _frames_of(model) for model in CLIENT_FRAMES}

# --- anything else a client might send ----------------------------------------------------
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_strings,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_strings, inner, max_size=4),
    max_leaves=12,
)
typed_frames = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    st.sampled_from([*CLIENT_FRAME_TYPES, "dance", ""]) | st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(
        st.sampled_from(["content", "message_id", "after", "extra", "type"]) | hostile_strings,
        json_values,
        max_size=3,
    ),
)


def _encode(value: Any, ascii_only: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)


def _encoded(values: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    return st.builds(_encode, values, st.booleans())


# Most examples exercise the frame schemas: one branch per frame model, then the rest.
frames = st.one_of(
    *(_encoded(strategy) for strategy in FIELD_FRAMES.values()),
    _encoded(typed_frames),
    _encoded(json_values),
    st.text(max_size=60),
    st.sampled_from(
        [
            "[" * 50_000,
            '{"a":' * 30_000,
            "{",
            "x" * 300_000,
            '{"type": "sync", "after": ' + "9" * 5_000 + "}",  # past int()'s digit limit
            '{"type": "sync", "after": 1e999}',
            '{"type": "sync", "after": -0}',
            '{"type": "ping", "type": "sync", "after": 0}',  # a repeated key
            '{"type": "message.send", "content": "\\ud800 \\u0000"}',
        ]
    ),
    st.binary(max_size=40),
)


# --- the test -------------------------------------------------------------------------------
def test_the_fuzzer_sends_every_frame_of_the_union_and_fuzzes_its_every_field():
    # One strategy per frame model of the union, in the union's order…
    assert list(FIELD_FRAMES) == list(CLIENT_FRAMES)
    assert [_valid_frame(model)["type"] for model in FIELD_FRAMES] == list(CLIENT_FRAME_TYPES)
    assert set(CLIENT_FRAME_TYPES) == set(ConversationConsumer.commands)
    assert len(CLIENT_FRAME_TYPES) == 8
    for model in FIELD_FRAMES:
        # …whose valid frame is that model's (ids as the socket will see them)…
        valid = {k: OWN_ID if v in IDS else v for k, v in _valid_frame(model).items()}
        assert type(CLIENT_FRAME.validate_python(valid)) is model
        # …and every field but `type` has valid and hostile values.
        for name, field in _fields(model).items():
            assert _valid_values(name, field)
            assert isinstance(_hostile_value(name, field), st.SearchStrategy)
    assert {"message.created", "generation.finished", "sync.state", "error", "pong"} <= (
        SERVER_FRAME_TYPES
    )


@pytest.fixture
def gated_agent(monkeypatch):
    """Replies that never finish while the test runs (unless stopped)."""
    agent = FakeAgent(gate=asyncio.Event(), gate_after=0)
    monkeypatch.setattr("conversations.replies.turns.astart_turn", agent)
    yield agent
    agent.gate.set()


@pytest.fixture
def world(alice, bob, settings, tmp_path):
    """Alice's token; her message and file in another conversation; Bob's message and file."""
    settings.CHAT_RATE_LIMIT = "100000/m"  # valid frames go deep, not into the limit
    settings.MEDIA_ROOT = tmp_path / "media"
    elsewhere = services.create_conversation(user=alice, title="Elsewhere")
    bobs = services.create_conversation(user=bob, title="Bob's")
    return {
        "token": create_api_token(user=alice, name="fuzz").secret,
        OWN_ELSEWHERE: _add(elsewhere, "user", "elsewhere").pk,
        OWN_FILE_ELSEWHERE: _upload(alice, elsewhere).pk,
        BOBS: _add(bobs, "user", "bob's").pk,
        BOBS_FILE: _upload(bob, bobs).pk,
        "bobs_conversation": bobs.pk,
    }


def _upload(user: Any, conversation: Conversation) -> Attachment:
    return attachments.upload(
        user=user, conversation_id=conversation.pk, name="note.txt", data=b"a note"
    )


def _add(conversation: Conversation, role: str, content: str, **fields: Any) -> Message:
    return seed.add_message(conversation_id=conversation.pk, role=role, content=content, **fields)


@sync_to_async
def _conversation_with_a_cut_reply(user: Any) -> tuple[Conversation, dict[str, Any]]:
    conversation = services.create_conversation(user=user, title="Fuzz")
    question = _add(conversation, "user", "a question", created_by=user)
    reply = _add(conversation, "assistant", "a cut", finish_reason="max_tokens")
    file = _upload(user, conversation)
    return conversation, {OWN_QUESTION: question.pk, OWN_REPLY: reply.pk, OWN_FILE: file.pk}


@sync_to_async
def _footprint(conversation: Conversation, bobs: Any) -> tuple[int, int, Any]:
    """What a refused frame must not change: the user's messages and runs, Bob's rows."""
    bob = Conversation.objects.get(pk=bobs)
    bobs_rows = (
        Message.objects.filter(conversation_id=bobs).count(),
        bob.current_message_id,
        Attachment.objects.filter(conversation_id=bobs, message__isnull=False).count(),
    )
    return (
        Message.objects.filter(conversation=conversation, role="user").count(),
        ReplyRun.objects.filter(conversation=conversation).count(),
        bobs_rows,
    )


async def _answers_until_pong(comm) -> list[dict]:
    answers = []
    while True:
        output = await comm.receive_output(timeout=10)
        assert output["type"] == "websocket.send", f"the socket closed: {output}"
        output["text"].encode()  # as Daphne sends it: UTF-8, so no lone surrogate
        frame = json.loads(output["text"])
        answers.append(frame)
        if frame["type"] == "pong":
            return answers


def _with_ids(frame: str | bytes, ids: dict[str, Any]) -> str | bytes:
    if isinstance(frame, bytes):
        return frame
    for placeholder, value in ids.items():
        frame = frame.replace(f'"{placeholder}"', json.dumps(str(value)))
    return frame


@given(batch=st.lists(frames, min_size=1, max_size=6))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
async def test_no_frame_breaks_the_socket_or_stores_what_it_refused(
    alice, world, gated_agent, batch
):
    conversation, ids = await _conversation_with_a_cut_reply(alice)
    ids |= {key: world[key] for key in (OWN_ELSEWHERE, OWN_FILE_ELSEWHERE, BOBS, BOBS_FILE)}
    ids[MISSING] = uuid.uuid4()
    comm = open_socket(conversation.id, token=world["token"])
    assert (await comm.connect())[0]
    try:
        for raw in batch:
            if not raw:  # a frame has some content (the test client refuses empty ones)
                continue
            frame = _with_ids(raw, ids)
            before = await _footprint(conversation, world["bobs_conversation"])
            if isinstance(frame, bytes):
                await comm.send_to(bytes_data=frame)
            else:
                await comm.send_to(text_data=frame)
            await comm.send_to(text_data='{"type": "ping"}')
            answers = await _answers_until_pong(comm)
            if _type_of(frame) == "ping" and not any(a["type"] == "error" for a in answers):
                answers += await _answers_until_pong(comm)  # that pong was the frame's own
            kinds = [a["type"] for a in answers]
            assert set(kinds) <= SERVER_FRAME_TYPES, answers
            assert {a["code"] for a in answers if a["type"] == "error"} <= ERROR_CODES, answers
            after = await _footprint(conversation, world["bobs_conversation"])
            assert after[2] == before[2], ("Bob's conversation changed", frame[:200], answers)
            if "error" in kinds:
                assert after == before, (frame[:200], answers)
            else:  # at most the user's message of a valid send or edit, and its run
                assert after[0] <= before[0] + 1 and after[1] <= before[1] + 1
            # (A stopped reply's partial text is stored as its run ends, whenever that is:
            # the footprint counts the user's messages and the runs, never the replies.)
    finally:
        await comm.disconnect()


def _type_of(frame: str | bytes) -> Any:
    """The frame's `type` as the server reads it, or None."""
    try:
        value = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    return value.get("type") if isinstance(value, dict) else None
