from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core.signals import got_request_exception
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "core"

    def ready(self) -> None:
        from . import unavailable

        post_migrate.connect(grant_table_privileges, sender=self)
        # A request that failed because PostgreSQL or Redis is out of reach answers 503.
        got_request_exception.connect(unavailable.note_outage)


def grant_table_privileges(using: str = "default", **kwargs: Any) -> None:
    """After every migrate: the app's roles may use every table of the app's models and the
    memory store (policies then choose the rows); not the agent's checkpoint tables."""
    from django.apps import apps
    from django.db import connections

    from . import rls_policies

    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    existing = set(connection.introspection.table_names())
    tables = {m._meta.db_table for m in apps.get_models(include_auto_created=True)}
    tables.add("store")
    statements = rls_policies.grants(sorted(tables & existing), read_only=["django_migrations"])
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
