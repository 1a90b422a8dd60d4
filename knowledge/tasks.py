"""Background work of the knowledge base, on the tasks framework (run by `manage.py worker`
on PostgreSQL, where it is enqueued on SQLite): embedding an upload's chunks."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django_tasks import task

from core import rls
from jobs.recovery import again_later, retried

from .vectors import embed_pending

logger = logging.getLogger(__name__)


def embed_later(document_id: Any, owner_id: Any) -> None:
    """After the upload commits, embed its chunks as a task (a worker process on
    PostgreSQL, never the web process that streams replies);
    `KNOWLEDGE_EMBED_IN_BACKGROUND = False` embeds before answering."""
    if settings.KNOWLEDGE_EMBED_IN_BACKGROUND:
        transaction.on_commit(lambda: embed_document.enqueue(str(document_id), owner_id))
    else:
        transaction.on_commit(lambda: embed_pending(owner_id=owner_id, document_id=document_id))


@task()
def embed_document(document_id: str, owner_id: int, attempt: int = 1) -> Any:
    """Embed the document's pending chunks, a batch per transaction (run again after a
    crash, it goes on with those still pending: none is embedded twice); return how many
    it embedded. Failing, it runs again after a backoff (jobs/recovery.py)."""

    def work() -> int:
        with rls.as_user(owner_id):
            return embed_pending(owner_id=owner_id, document_id=document_id)

    def again() -> bool:
        return again_later(embed_document, attempt, document_id, owner_id)

    return retried("embed_document", attempt, work, again)
