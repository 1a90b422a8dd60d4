"""Delete conversations archived longer ago than the retention period, temporary
conversations a day after their last message, and attachments uploaded but never sent
(older than a day)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from conversations.attachments import purge_unsent
from conversations.bulk import purge_archived_conversations
from conversations.temporary import purge_expired_temporary


class Command(BaseCommand):
    help = (
        "Delete conversations archived more than N days ago (CHAT_RETENTION_ARCHIVED_DAYS),"
        " temporary conversations a day after their last message, and unsent attachments"
        " older than a day. The workers run it hourly (jobs/schedule.py)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None, help="override the setting")
        parser.add_argument("--dry-run", action="store_true", help="count, delete nothing")

    def handle(self, *args, days: int | None, dry_run: bool, **options) -> None:
        count = purge_archived_conversations(days=days, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        self.stdout.write(f"{verb} {count} archived conversation(s)")
        temporary = purge_expired_temporary(dry_run=dry_run)
        self.stdout.write(f"{verb} {temporary} expired temporary conversation(s)")
        if not dry_run:
            self.stdout.write(f"deleted {purge_unsent()} unsent attachment(s)")
