"""LangGraph's store tables (`store`, `store_migrations`), made by the store's own setup."""

from django.db import migrations


def create_store(apps, schema_editor):
    from memories.store import setup_store

    setup_store()


class Migration(migrations.Migration):
    # The store's setup builds an index CONCURRENTLY, which cannot run in a transaction.
    atomic = False

    dependencies = []

    operations = [migrations.RunPython(create_store, migrations.RunPython.noop)]
