"""A PostgreSQL database made for one benchmark run and dropped after it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/chatsite"


def admin_url(url: str, dbname: str) -> str:
    """Return `url` pointing at another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


def run_in_scratch_database(name: str, run: Callable[[str], dict[str, object]]) -> None:
    """Create database `name` (UTF-8, C.UTF-8), run the benchmark on it, print its JSON line.

    The database is dropped afterwards unless BENCH_KEEP is set.
    """
    base = os.environ.get("DATABASE_URL", DEFAULT_URL)
    if not base.startswith("postgres"):
        sys.exit(f"{sys.argv[0]} needs DATABASE_URL=postgres://…")
    admin = admin_url(base, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(
            f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8'"
            " LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"
        )
    try:
        result = run(admin_url(base, name))
    finally:
        from django.db import connections

        connections.close_all()
        if not os.environ.get("BENCH_KEEP"):
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(json.dumps(result, ensure_ascii=False))


def main_with(
    name: str, doc: str, flag: str, default: int, run: Callable[[str, int], dict]
) -> None:
    """A bench's command line with one number (`flag`), run on scratch database `name`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(flag, type=int, default=default)
    value = getattr(parser.parse_args(), flag.lstrip("-").replace("-", "_"))
    (Path(__file__).resolve().parent.parent / "var").mkdir(exist_ok=True)
    run_in_scratch_database(name, lambda url: run(url, value))
