"""Embed every document chunk that has no vector of the current embedding model.

Run it after changing `EMBEDDING_MODEL` (every chunk is then re-embedded), or to finish
what a stopped process left: each batch is committed as it is done, so a run stopped at
any point is taken up by the next one where it ended. Retrieval meanwhile finds the
chunks without a vector by their words.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandParser

from core import rls
from knowledge import embeddings, vectors


class Command(BaseCommand):
    help = "Embed the document chunks that lack a vector of the current model (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", type=int, help="only this user's chunks (their id)")
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be embedded, change nothing"
        )

    def handle(self, *args, **options) -> None:
        with rls.maintenance():  # every user's chunks
            total = vectors.pending(owner_id=options["user"]).count()
            self.stdout.write(f"{total} chunks to embed with {embeddings.model_id()}")
            if options["dry_run"] or not total:
                return
            started = time.monotonic()

            def progress(done: int) -> None:
                rate = done / max(time.monotonic() - started, 1e-6)
                left = (total - done) / rate if rate else 0
                bar = "#" * int(30 * done / total)
                self.stdout.write(
                    f"\r[{bar:<30}] {done}/{total} · {rate:.0f}/s · {left:.0f} s left",
                    ending="",
                )
                self.stdout.flush()

            done = vectors.embed_pending(owner_id=options["user"], progress=progress)
            self.stdout.write("")
            self.stdout.write(self.style.SUCCESS(f"embedded {done} chunks"))
