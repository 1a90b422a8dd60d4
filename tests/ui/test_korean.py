"""The Korean UI is whole: every catalog entry has Korean, and no page shows a piece of
interface text that stays the same in English and Korean (an untranslated string)."""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.utils import timezone

from conversations import services, shares
from conversations.models import Conversation, Project
from memories import services as memories
from tests.support import seed

pytestmark = pytest.mark.django_db

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "ko" / "LC_MESSAGES"
# Text that is the same in both languages by nature: names, formats, keys, numbers.
SAME_IN_BOTH = re.compile(
    r"^(Chat with memory|Ctrl|Shift|Esc|Enter|K|O|S|\?|⌘|Markdown \(\.md\)|JSON \(\.json\)|"
    r"API|English|한국어|service_id|python|Bearer|Authorization: Bearer <token>|"
    r"cht_\w+…|Ctrl [K⇧ O]+|[\W\d_]+)$"
)


def _entries(path: Path) -> list[tuple[str, str, bool]]:
    """Return (msgid, msgstr, fuzzy) for each entry of a .po file."""
    found = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        ids = re.search(r'^msgid ((?:".*"\n?)+)', block, re.M)
        strs = re.search(r'^msgstr(?:\[0\])? ((?:".*"\n?)+)', block, re.M)
        if not ids or not strs:
            continue
        msgid = "".join(re.findall(r'"(.*)"', ids.group(1)))
        msgstr = "".join(re.findall(r'"(.*)"', strs.group(1)))
        if msgid:
            found.append((msgid, msgstr, "#, fuzzy" in block))
    return found


@pytest.mark.parametrize("name", ["django.po", "djangojs.po"])
def test_every_catalog_entry_has_korean(name):
    missing = [msgid for msgid, msgstr, fuzzy in _entries(LOCALE / name) if not msgstr or fuzzy]
    assert missing == []


class _Text(HTMLParser):
    """Collect the visible text nodes and the labels people read (title, placeholder…)."""

    SKIP = {"script", "style", "code", "pre", "time"}

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        for key, value in attrs:
            if key in {"title", "placeholder", "aria-label", "alt"} and value:
                self.items.append(value.strip())

    def handle_endtag(self, tag):
        if tag in self.SKIP and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.items.append(" ".join(data.split()))


def _texts(html: str) -> set[str]:
    parser = _Text()
    parser.feed(html)
    return set(parser.items)


@pytest.fixture
def pages(alice):
    """The pages of a user with a little of everything, and what is theirs on them."""
    project = Project.objects.create(owner=alice, name="Travel")
    conversation = services.create_conversation(user=alice, title="Trip", project=project)
    seed.add_message(conversation_id=conversation.id, role="user", content="Where to?")
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="Lisbon.",
        model="offline",
        tokens_used=3,
        finish_reason="stopped",
        parts=[
            {"type": "thinking", "step": "retrieve", "code": "retrieve.found",
             "params": {"count": 2}, "content": "Searched your documents: 2 passages found"},
            {"type": "references", "items": [{"document_title": "Guide", "snippet": "Lisbon"}]},
        ],
        metadata={"context": {"summaries": [], "message_ids": [], "estimated_input_tokens": 9,
                              "actual_input_tokens": 9, "window": 128000,
                              "memories": [{"id": "m1", "text": "Likes trams"}]}},
    )  # fmt: skip
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="## Main points\n- Lisbon", summary_at=timezone.now()
    )
    memories.add_memory(user_id=alice.pk, text="Likes trams")
    share = shares.create_share(user=alice, conversation_id=conversation.id)
    urls = [
        "/",
        "/conversations/",
        "/conversations/?q=Lisbon",
        f"/conversations/{conversation.id}/",
        "/documents/",
        "/settings/",
        "/settings/memory/",
        "/settings/tokens/",
        "/settings/data/",
        "/prompts/",
        "/prompts/new/",
        f"/s/{share.token}/",
        "/conversations/00000000-0000-0000-0000-000000000000/",
    ]
    theirs = {
        "Trip",
        "Travel",
        "Where to?",
        "Lisbon.",
        "Lisbon",
        "Likes trams",
        "Guide",
        "alice",
        "offline",
        "Main points",
        "Default model",
        "summarize",
    }  # fmt: skip  (a /command's example: commands are a-z, 0-9 and -)
    return urls, theirs


def test_no_page_shows_english_interface_text_in_korean(alice_client, pages):
    from django.test import Client

    client = Client()
    urls, theirs = pages
    untranslated = {}
    for url in urls:
        english = _texts(alice_client.get(url, HTTP_ACCEPT_LANGUAGE="en").text)
        korean = _texts(alice_client.get(url, HTTP_ACCEPT_LANGUAGE="ko").text)
        same = {
            text
            for text in english & korean
            if re.search(r"[A-Za-z]{2,}", text)
            and text not in theirs
            and not SAME_IN_BOTH.match(text)
        }
        if same:
            untranslated[url] = sorted(same)
    for url in ("/accounts/login/", "/accounts/signup/"):
        english = _texts(client.get(url, HTTP_ACCEPT_LANGUAGE="en").text)
        korean = _texts(client.get(url, HTTP_ACCEPT_LANGUAGE="ko").text)
        same = {
            t
            for t in english & korean
            if re.search(r"[A-Za-z]{2,}", t) and not SAME_IN_BOTH.match(t)
        }
        if same:
            untranslated[url] = sorted(same)
    assert untranslated == {}, "\n".join(f"{u}: {v}" for u, v in untranslated.items())


# The guard below: a service's refusal reaches people as an API error body or a toast, so
# its message is a gettext call evaluated where it is raised (in the active language).
APPS = ("accounts", "agent", "audit", "conversations", "core", "knowledge", "memories",
        "presets", "sso", "toolbox", "usage")  # fmt: skip


def _user_facing_errors() -> set[str]:
    """Name every error whose message people read: core.errors' and TooDeep."""
    from core import errors
    from core.schemas import TooDeep

    found = {TooDeep.__name__}
    for name, value in vars(errors).items():
        if isinstance(value, type) and issubclass(value, errors.ServiceError):
            found.add(name)
    return found


def _is_english_literal(node) -> bool:
    """Say whether `node` is English text written in place: a string, an f-string,
    `"…" % x`, `"…".format(…)` or `"…"[:n]`, not a gettext call."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_english_literal(node.left) or _is_english_literal(node.right)
    if isinstance(node, ast.Subscript):
        return _is_english_literal(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _is_english_literal(node.func.value)
    return False


def _message_of(call, name: str):
    """Return the message argument of an error's constructor or `error_response`."""
    position = {"error_response": 2, "HttpError": 1}.get(name, 0)
    for keyword in call.keywords:
        if keyword.arg == "message":
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def test_every_error_message_people_read_is_translated():
    root = Path(__file__).resolve().parents[2]
    names = _user_facing_errors() | {"error_response", "HttpError"}
    english = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if "tests" in relative.parts or path.name.startswith("test_"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name not in names:
                    continue
                message = _message_of(node, name)
                if message is not None and _is_english_literal(message):
                    english.append(f"{relative}:{node.lineno}")
    assert english == [], "English error messages, wrap them in gettext:\n" + "\n".join(
        sorted(english)
    )
