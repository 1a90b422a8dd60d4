"""`dumpdata` as the maintenance role: every user's rows (as the app role with no user it
would silently dump none of them — core/rls.py)."""

from typing import Any

from django.core.management.commands import dumpdata

from core import rls


class Command(dumpdata.Command):
    def handle(self, *args: Any, **options: Any) -> Any:
        with rls.maintenance():
            return super().handle(*args, **options)
