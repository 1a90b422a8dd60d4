"""Rows of a reply's hot path in one short statement each, without building a queryset.

Under load every reply starts and ends with a handful of writes and lookups, and the ORM
spent more CPU building and compiling each statement than PostgreSQL spent running it:
`filter(...).first()` cost ~1.4 ms of the process's CPU, the same statement written out
~0.2 ms (`tools`: measured on this machine, DEBUG off). A reply ran ~20 of them, on the
threads that share the GIL with the event loop that streams every other reply. These
helpers keep Django's own parts (each field's conversion to and from the database, the
model's `from_db`), so an instance built here is the one the ORM would have built.

Statements run on Django's connection, so row-level security applies as to any query.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)


@cache
def _insert_sql(model: type[models.Model]) -> tuple[str, tuple[models.Field, ...]]:
    fields = tuple(model._meta.concrete_fields)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    table = connection.ops.quote_name(model._meta.db_table)
    return f"INSERT INTO {table} ({columns}) VALUES ({marks})", fields


def insert_statement(instance: models.Model) -> tuple[str, list[Any]]:
    """Return the INSERT of `instance` (every concrete column) and its parameters, for a
    caller that runs it inside a larger statement (a data-modifying WITH)."""
    sql, fields = _insert_sql(type(instance))
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    return sql, params


def update_statement(instance: models.Model, names: Sequence[str]) -> tuple[str, list[Any]]:
    """Return the UPDATE of `instance`'s fields `names` by primary key (as `save(update_fields=
    names)` writes them: an `auto_now` field among them takes the time now)."""
    meta = instance._meta
    fields = [meta.get_field(name) for name in names]
    sets = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in fields)
    params = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in fields]
    params.append(meta.pk.get_db_prep_value(instance.pk, connection))
    table = connection.ops.quote_name(meta.db_table)
    return (
        f"UPDATE {table} SET {sets} WHERE {connection.ops.quote_name(meta.pk.column)} = %s",
        params,
    )


def param(model: type[models.Model], name: str, value: Any) -> Any:
    """Return `value` as the ORM passes `model`'s field `name` ("pk": the primary key) to
    the database: a UUID as is on PostgreSQL and as hex on SQLite (whose driver refuses
    one), a time as naive UTC text on SQLite."""
    field = model._meta.pk if name == "pk" else model._meta.get_field(name)
    return field.get_db_prep_value(value, connection)


def saved(instance: M) -> M:
    """Mark an instance written by a statement here as loaded from the database."""
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def insert(instance: M) -> M:
    """INSERT `instance` (its primary key set by the caller or a Python default)."""
    sql, params = insert_statement(instance)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    return saved(instance)


def fetch(model: type[M], sql: str, params: Sequence[Any]) -> M | None:
    """Return the first row of `sql` (which selects `model`'s columns, maybe more) as an
    instance, as the ORM builds one; extra columns become attributes. None: no row."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
        if row is None:
            return None
        names = [column[0] for column in cursor.description]
    return _instance(model, names, row)


def fetch_all(model: type[M], sql: str, params: Sequence[Any]) -> list[M]:
    """Return every row of `sql` as instances (see `fetch`)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
        names = [column[0] for column in cursor.description] if found else []
    return [_instance(model, names, row) for row in found]


def _instance(model: type[M], names: list[str], row: Sequence[Any]) -> M:
    converters = _converters(model)
    values = dict(zip(names, row, strict=True))
    own = [f.attname for f in model._meta.concrete_fields]
    loaded = []
    for attname in own:
        value = values.pop(attname)
        convert = converters.get(attname)
        loaded.append(convert(value) if convert is not None else value)
    instance = model.from_db(connection.alias, own, loaded)
    for name, value in values.items():
        setattr(instance, name, value)
    return instance


@cache
def _converters(model: type[models.Model]) -> dict[str, Any]:
    """Each field's conversion from the database value (JSON text, for one), as the
    ORM's compiler applies it."""
    found = {}
    for field in model._meta.concrete_fields:
        column = field.get_col(model._meta.db_table)
        steps = [*connection.ops.get_db_converters(column), *column.get_db_converters(connection)]
        if steps:
            found[field.attname] = _chain(column, steps)
    return found


def _chain(column: Any, steps: list[Any]) -> Any:
    def convert(value: Any) -> Any:
        for step in steps:
            value = step(value, column, connection)
        return value

    return convert


def execute(sql: str, params: Sequence[Any]) -> int:
    """Run one statement; return how many rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def column(sql: str, params: Sequence[Any]) -> list[Any]:
    """Return the first column of every row of `sql`."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]
