"""Reads for the list page and search: filters, sorts, keyset pages, ranked message hits.

On PostgreSQL a term matches through the stored `search_vector` (a prefix query on the
`simple` tsvector, GIN) or as a substring (`ILIKE`, served by the pg_trgm GIN index), so
'회의' finds '회의가'. On SQLite a term matches as a substring (`icontains`).

Row-level security would keep those indexes from the planner (neither operator is
LEAKPROOF), so on PostgreSQL messages are matched by the search functions of
core/migrations/0002 (`conversations_message_matches`, `conversations_recall_matches`):
they search as a role the policies leave whole and apply the owner filter themselves from
the scope's `app.user_id`; the rows they name are then read here as usual, under RLS.

Matching, and finding the first match, read the text once; ranking and the snippet work on
a bounded window around that match. pg_trgm's `word_similarity` is quadratic in a word's
repetitions (16k of one word in a message took 6-8 s a search), so on a long text it sees
only RANK_WINDOW_CHARS (tests/api/test_search.py and bench/search.py `repetitions` hold it
linear).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import FloatField, Lookup, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext as _
from pydantic import Field

from core import rls
from core.errors import Invalid
from core.pagination import KeyField, Page, SortKey, paginate

from .matching import like_pattern, messages_matching, prefix_tsquery, recent_messages_holding
from .models import Conversation, Message
from .schemas import SortField
from .selectors import listed_by

NULLABLE_SORT_FIELDS = {"last_message_at"}
MAX_LIMIT = 200
MAX_QUERY_CHARS = 200
MAX_TERMS = 8
SNIPPET_CHARS = 160
# The text `word_similarity` ranks: this many characters around the first term's first
# match (its cost grows with the square of a word's repetitions in what it reads).
RANK_WINDOW_CHARS = 1000


@dataclass(frozen=True)
class MessageHit:
    """One message that matched (the API answers with these as they are)."""

    conversation_id: str
    conversation_title: str
    message_id: str
    sequence_number: int
    role: str
    created_at: datetime
    rank: float
    snippet: Annotated[str, Field(description="HTML: escaped text, matches in <mark>")]


class ILikeContains(Lookup):
    """`field ILIKE '%term%'` as written, so PostgreSQL can use the pg_trgm index."""

    lookup_name = "ilike_contains"

    def get_db_prep_lookup(self, value: Any, connection: Any) -> tuple[str, list[Any]]:
        return "%s", [like_pattern(value)]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} ILIKE {rhs}", [*lhs_params, *rhs_params]


class WordsPrefix(Lookup):
    """The row's stored `search_vector` matches a prefix tsquery (PostgreSQL only)."""

    lookup_name = "words_prefix"

    def get_db_prep_lookup(self, value: Any, connection: Any) -> tuple[str, list[Any]]:
        return "%s", [value]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        alias = compiler.quote_name_unless_alias(self.lhs.alias)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{alias}.search_vector @@ to_tsquery('simple', {rhs})", rhs_params


for _field in (Message._meta.get_field("content"), Conversation._meta.get_field("title")):
    _field.register_lookup(ILikeContains)
    _field.register_lookup(WordsPrefix)


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def split_terms(q: str) -> list[str]:
    """Return the distinct search terms of `q` (whitespace-separated, at most a few)."""
    if len(q) > MAX_QUERY_CHARS:
        raise Invalid(_("The search is longer than %(n)s characters.") % {"n": MAX_QUERY_CHARS})
    terms: list[str] = []
    for term in q.split():
        if term.casefold() not in {t.casefold() for t in terms}:
            terms.append(term)
    return terms[:MAX_TERMS]


def _term_matches(field: str, term: str) -> Q:
    if not _is_postgres():
        return Q(**{f"{field}__icontains": term})
    condition = Q(**{f"{field}__ilike_contains": term})
    tsquery = prefix_tsquery(term)
    if tsquery:
        condition |= Q(**{f"{field}__words_prefix": tsquery})
    return condition


def any_word_starts(*, conversation_id: Any, words: list[str], limit: int) -> Q:
    """Match the conversation's messages where a word of the content starts with one of
    `words` (any case); words that are not plain words match as substrings. On PostgreSQL
    only the `limit` newest user and assistant messages that match (all recall reads),
    found through the search_vector index, under row-level security too; elsewhere a
    substring match."""
    if _is_postgres():
        return Q(
            pk__in=recent_messages_holding(
                conversation_id=conversation_id, words=words, limit=limit
            )
        )
    condition = Q()
    for word in words:
        condition |= Q(content__icontains=word)
    return condition


def _all_terms_match(field: str, terms: list[str]) -> Q:
    condition = Q()
    for term in terms:
        condition &= _term_matches(field, term)
    return condition


def _owned_conversation_ids(user: Any, *, but: Any = None) -> list[Any]:
    # Fetched first so the planner walks the owner's messages by conversation (a few
    # thousand rows) instead of scanning every user's messages with ILIKE; on PostgreSQL
    # it is the app's own owner filter, beside the search function's.
    return list(listed_by(user).exclude(pk=but).values_list("id", flat=True))


def _messages_with_term(user: Any, term: str) -> Any:
    """Return a subquery of the ids of the user's conversations with a message matching
    `term`."""
    if _is_postgres():
        return messages_matching([term], column="conversation_id")
    owned = _owned_conversation_ids(user)
    return (
        Message.objects.filter(conversation_id__in=owned)
        .filter(_term_matches("content", term))
        .values("conversation_id")
    )


def list_conversations(
    *,
    user: Any,
    q: str | None = None,
    status: str | None = None,
    project_id: int | None = None,
    service_id: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    sort: SortField = "updated_at",
    order: Literal["asc", "desc"] = "desc",
    limit: int = 50,
    cursor: str | None = None,
) -> Page:
    """Return one page of the user's listed conversations (never temporary ones),
    filtered and sorted (keyset cursor); the filters come typed from the edge
    (`ConversationFilters`, the list page's `ListPageQuery`)."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    qs: QuerySet[Conversation] = listed_by(user)
    if status:
        qs = qs.filter(status=status)
    if project_id is not None:
        qs = qs.filter(project_id=project_id)
    if service_id:
        qs = qs.filter(service_id=service_id)
    if created_after is not None:
        qs = qs.filter(created_at__gte=created_after)
    if created_before is not None:
        qs = qs.filter(created_at__lt=created_before)
    for term in split_terms(q or ""):
        qs = qs.filter(_term_matches("title", term) | Q(pk__in=_messages_with_term(user, term)))
    with rls.narrowed_to(getattr(user, "pk", None)):  # the search function reads the scope's user
        return paginate(
            qs.select_related("project"),
            sort=_conversation_order(sort, order),
            cursor=cursor,
            limit=limit,
            key=f"conv:{sort}:{order}",
        )


def _conversation_order(sort: SortField, order: Literal["asc", "desc"]) -> SortKey:
    """Return the list's sort key; conversations without messages come last either way."""
    kind = int if sort == "message_count" else datetime
    field = KeyField(sort, kind, nullable=sort in NULLABLE_SORT_FIELDS)
    return SortKey((field,), descending=order == "desc")


def search_messages(
    *,
    user: Any,
    q: str,
    limit: int = 20,
    cursor: str | None = None,
    role: str | None = None,
    after: datetime | None = None,
    before: datetime | None = None,
    exclude_conversation_id: Any = None,
) -> Page:
    """Return the user's messages that match every term of `q` (none of a temporary
    conversation, nor of `exclude_conversation_id`), best first, with snippets; only
    `role`'s, written in [`after`, `before`) when given."""
    terms = split_terms(q or "")
    if not terms:
        raise Invalid(_("Give a search term (q)."))
    limit = max(1, min(int(limit), MAX_LIMIT))
    owned = _owned_conversation_ids(user, but=exclude_conversation_id)
    qs = Message.objects.filter(conversation_id__in=owned)
    if _is_postgres():
        qs = qs.filter(pk__in=messages_matching(terms))
    else:
        qs = qs.filter(_all_terms_match("content", terms))
    if role is not None:
        qs = qs.filter(role=role)
    if after is not None:
        qs = qs.filter(created_at__gte=after)
    if before is not None:
        qs = qs.filter(created_at__lt=before)
    if _is_postgres():
        tsquery = " | ".join(filter(None, (prefix_tsquery(t) for t in terms))) or ""
        rank = RawSQL(
            # float8: a real would come back rounded and break the keyset comparison.
            # ts_rank_cd reads the stored vector (at most 256 positions of a word);
            # word_similarity a short text whole, a long one's window (strpos and substr
            # are linear in the text).
            "(ts_rank_cd(conversations_message.search_vector, to_tsquery('simple', %s))"
            " + word_similarity(%s, CASE WHEN octet_length(conversations_message.content) <= %s"
            " THEN conversations_message.content ELSE substr(conversations_message.content,"
            " greatest(1, strpos(lower(conversations_message.content), lower(%s)) - %s), %s)"
            " END))::float8",
            [
                tsquery,
                " ".join(terms),
                RANK_WINDOW_CHARS,
                terms[0],
                RANK_WINDOW_CHARS // 2,
                RANK_WINDOW_CHARS,
            ],
            output_field=FloatField(),
        )
        qs = qs.annotate(rank=rank)
        ranked_by = KeyField("rank", (float, int))
    else:
        ranked_by = KeyField("created_at", datetime)
    with rls.narrowed_to(getattr(user, "pk", None)):  # the search function reads the scope's user
        page = paginate(
            qs.only("id", "conversation_id", "content", "sequence_number", "role", "created_at"),
            sort=SortKey((ranked_by,), descending=True),
            cursor=cursor,
            limit=limit,
            key=f"search:{ranked_by.name}",
        )
    rows = page.items
    # The titles after, by primary key: joined into the search, the conversations' owner
    # filter (the app's, and row-level security's) sent the planner scanning every one.
    titles = dict(
        Conversation.objects.filter(pk__in={row.conversation_id for row in rows}).values_list(
            "pk", "title"
        )
    )
    hits = [
        MessageHit(
            conversation_id=str(row.conversation_id),
            conversation_title=titles.get(row.conversation_id, ""),
            message_id=str(row.pk),
            sequence_number=row.sequence_number,
            role=row.role,
            created_at=row.created_at,
            rank=float(getattr(row, "rank", 0.0) or 0.0),
            snippet=highlight(row.content, terms),
        )
        for row in rows
    ]
    return Page(items=hits, next_cursor=page.next_cursor)


def search_other_conversations(
    *, user_id: Any, query: str, exclude_conversation_id: Any, limit: int = 5
) -> list[dict[str, Any]]:
    """Return the agent's `search_conversations` results: the search people use (every
    word, best first), over the user's conversations but the one it answers in; snippets
    as plain text."""
    terms = " ".join(query.split()[:MAX_TERMS])[:MAX_QUERY_CHARS]
    if not terms:
        return []
    user = get_user_model()(pk=user_id)
    hits = search_messages(
        user=user, q=terms, limit=limit, exclude_conversation_id=exclude_conversation_id
    ).items
    return [
        {
            "conversation_id": hit.conversation_id,
            "title": hit.conversation_title,
            "snippet": html.unescape(MARKS.sub("", hit.snippet)),
            "role": hit.role,
            "created_at": hit.created_at.isoformat(),
        }
        for hit in hits
    ]


MARKS = re.compile("</?mark>")


def highlight(text: str, terms: list[str], *, width: int = SNIPPET_CHARS) -> str:
    """Return an HTML-safe excerpt of `text` around the first match, matches in <mark>."""
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.I)
    first = pattern.search(text)
    start = 0 if first is None else max(0, first.start() - width // 3)
    end = min(len(text), start + width)
    if start > 0:
        # Don't cut a word in half at the left edge when a space is near.
        space = text.rfind(" ", max(0, start - 15), start)
        start = space + 1 if space != -1 else start
    window = text[start:end]
    out: list[str] = ["…" if start > 0 else ""]
    pos = 0
    for match in pattern.finditer(window):
        out.append(html.escape(window[pos : match.start()]))
        out.append(f"<mark>{html.escape(match.group())}</mark>")
        pos = match.end()
    out.append(html.escape(window[pos:]))
    out.append("…" if end < len(text) else "")
    return "".join(out)
