"""`migrate` as the tables' owner (the login), not the app role (core/rls.py)."""

from typing import Any

from django.core.management.commands import migrate

from core import rls


class Command(migrate.Command):
    def handle(self, *args: Any, **options: Any) -> Any:
        with rls.owner_mode():
            return super().handle(*args, **options)
