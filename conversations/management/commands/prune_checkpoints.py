"""Keep only the latest checkpoint of every conversation's agent thread.

A turn prunes its own thread (agent/threads.py); threads written before that kept a
checkpoint per turn, each holding the whole state, and grew with the square of their
turns. This prunes them, and drops the threads of conversations that no longer exist.
Each thread is pruned in its own transaction, in id order: stopped at any point, the next
run goes on with the threads still unpruned.
"""

from __future__ import annotations

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from agent import checkpoint, threads
from conversations.models import Conversation, ReplyRun
from core import rls
from core.ids import parse_uuid


@rls.maintenance()  # every user's conversations
def _missing(thread_ids: list[str]) -> list[str]:
    """Return the thread ids no conversation has (their conversation was deleted), and the
    side-by-side threads (`<conversation>/side/<run>`) whose run is no longer running."""
    owner = {thread_id: thread_id.split("/", 1)[0] for thread_id in thread_ids}
    conversations = [pk for pk in set(owner.values()) if parse_uuid(pk)]
    kept = {
        str(pk)
        for pk in Conversation.objects.filter(pk__in=conversations).values_list("pk", flat=True)
    }
    sides = {t: t.rsplit("/", 1)[1] for t in thread_ids if "/side/" in t}
    running = {
        str(pk)
        for pk in ReplyRun.objects.filter(
            pk__in=[run for run in sides.values() if parse_uuid(run)],
            status=ReplyRun.Status.RUNNING,
        ).values_list("pk", flat=True)
    }
    return [
        thread_id
        for thread_id in thread_ids
        if owner[thread_id] not in kept or (thread_id in sides and sides[thread_id] not in running)
    ]


_amissing = sync_to_async(_missing)


def megabytes(count: int) -> str:
    return f"{count / 1_000_000:.2f} MB"


class Command(BaseCommand):
    help = (
        "Keep only the latest checkpoint of each conversation's agent thread, and delete the"
        " threads of deleted conversations. Resumable: run it again to go on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=100, help="threads per progress line")
        parser.add_argument("--dry-run", action="store_true", help="count, change nothing")

    def handle(self, *args, batch: int, dry_run: bool, **options) -> None:
        async_to_sync(self.aprune)(batch=max(1, batch), dry_run=dry_run)

    async def aprune(self, *, batch: int, dry_run: bool) -> None:
        saver = await checkpoint.open_checkpointer(settings.CHECKPOINT_URL)
        try:
            before = await checkpoint.stored_bytes(saver)
            orphans = await _amissing(await checkpoint.all_threads(saver))
            unpruned = set(await checkpoint.unpruned_threads(saver, limit=10**9))
            todo = len(unpruned - set(orphans))
            self.stdout.write(
                f"checkpoints: {megabytes(before)}; {todo} thread(s) to prune,"
                f" {len(orphans)} of deleted conversations"
            )
            if dry_run:
                return
            for thread_id in orphans:
                await threads.delete_thread(saver, thread_id)
            done, failed, last = 0, 0, ""
            while ids := await checkpoint.unpruned_threads(saver, after=last, limit=batch):
                for thread_id in ids:
                    failed += not await threads.prune_thread(saver, thread_id)
                done, last = done + len(ids), ids[-1]
                self.stdout.write(f"pruned {done - failed}/{todo} thread(s)")
            if failed:
                self.stdout.write(f"{failed} thread(s) could not be pruned now: run it again")
            after = await checkpoint.stored_bytes(saver)
            self.stdout.write(f"checkpoints: {megabytes(before)} -> {megabytes(after)}")
        finally:
            await checkpoint.close_checkpointer(saver)
