"""`loaddata` as the maintenance role: every user's rows (as the app role with no user it
would be refused every owned row — core/rls.py)."""

from typing import Any

from django.core.management.commands import loaddata

from core import rls


class Command(loaddata.Command):
    def handle(self, *args: Any, **options: Any) -> Any:
        with rls.maintenance():
            return super().handle(*args, **options)
