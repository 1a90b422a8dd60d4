"""`flush` as the tables' owner (TRUNCATE is the owner's, never the app role's)."""

from typing import Any

from django.core.management.commands import flush

from core import rls


class Command(flush.Command):
    def handle(self, *args: Any, **options: Any) -> Any:
        with rls.owner_mode():
            return super().handle(*args, **options)
