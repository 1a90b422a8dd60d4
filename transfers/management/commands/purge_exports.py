"""Delete exports of all conversations a day after they were asked for (their zip too)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from transfers.export_jobs import purge_expired_exports


class Command(BaseCommand):
    help = (
        "Delete exports of all conversations (and their zips) older than a day."
        " The workers run it hourly."
    )

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"deleted {purge_expired_exports()} export(s) older than a day")
