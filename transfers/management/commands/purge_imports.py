"""Delete the records of large imports a day after they were asked for (an upload left too)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from transfers.import_jobs import purge_old_imports


class Command(BaseCommand):
    help = "Delete records of large imports older than a day. The workers run it hourly."

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"deleted {purge_old_imports()} import record(s) older than a day")
