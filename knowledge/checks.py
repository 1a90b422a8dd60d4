"""A retrieval check people can run: the passages a question gets (exactly what the agent
is given, by the same ranking, with the path that found each), and saved questions with
the document that should answer them, whose hit rate shows when retrieval got worse (a
change of embedding model, a document replaced)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from agent.nodes.retrieve import TOP_K
from core.errors import Invalid, NotFound
from core.schemas import storable_text
from core.user_turns import hold_user

from .hybrid import retrieve
from .models import Document, SavedQuestion

# A saved question is answered when its document is among the first HIT_AT passages.
HIT_AT = 3
MAX_SAVED = 50
QUESTION_MAX_CHARS = 500


def passages_for(*, user: Any, question: str) -> list[dict[str, Any]]:
    """The passages the agent would be given for `question` (its knowledge base, no
    conversation's attachments), best first."""
    return retrieve(user_id=user.pk, query=question, k=TOP_K)


@transaction.atomic
def save_question(*, user: Any, question: Any, document_id: Any) -> SavedQuestion:
    """Keep `question` with the user's document that answers it."""
    if not isinstance(question, str) or not question.strip():
        raise Invalid(_("Write the question to save."))
    try:
        question = storable_text(" ".join(question.split()))
    except ValueError:
        raise Invalid(_("The question cannot be stored as written.")) from None
    if len(question) > QUESTION_MAX_CHARS:
        raise Invalid(_("A question is at most %(n)d characters.") % {"n": QUESTION_MAX_CHARS})
    try:
        document = Document.objects.get(owner=user, pk=document_id)
    except (Document.DoesNotExist, ValueError, TypeError, ValidationError):
        raise NotFound(_("No such document.")) from None
    hold_user(user.pk)
    if SavedQuestion.objects.filter(owner=user).count() >= MAX_SAVED:
        raise Invalid(_("You have %(n)d saved questions; delete some first.") % {"n": MAX_SAVED})
    return SavedQuestion.objects.create(owner=user, question=question, document=document)


def delete_question(*, user: Any, question_id: Any) -> None:
    deleted, _ = SavedQuestion.objects.filter(owner=user, pk=_int(question_id)).delete()
    if not deleted:
        raise NotFound(_("No such saved question."))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise NotFound(_("No such saved question.")) from None


@dataclass(frozen=True)
class Outcome:
    saved: SavedQuestion
    rank: int | None  # where its document came (1-based), None when not in the top HIT_AT


def run_saved(*, user: Any) -> list[Outcome]:
    """Every saved question's outcome now."""
    outcomes = []
    for saved in SavedQuestion.objects.filter(owner=user).select_related("document"):
        found = retrieve(user_id=user.pk, query=saved.question, k=HIT_AT)
        ids = [f["document_id"] for f in found]
        wanted = str(saved.document_id)
        outcomes.append(Outcome(saved, ids.index(wanted) + 1 if wanted in ids else None))
    return outcomes
