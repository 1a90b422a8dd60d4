"""Write static/js/step_catalog.js from agent/steps.py (run after changing a step)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from conversations.steps import JS_CATALOG, write_javascript_catalog


class Command(BaseCommand):
    help = "Write the reply steps' JavaScript catalog from agent/steps.py (--check: compare only)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="fail if the file is not current; write nothing"
        )

    def handle(self, *args, check: bool = False, **options) -> None:
        current = write_javascript_catalog(check=check)
        if check and not current:
            raise CommandError(f"{JS_CATALOG} is out of date: run manage.py step_catalog")
        self.stdout.write(f"{JS_CATALOG} {'is current' if current else 'written'}")
