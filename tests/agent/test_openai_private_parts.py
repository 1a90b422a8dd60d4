"""The one private part of the openai client we read (agent/model_body.py): its aiohttp
transport's stream and error mapping. An upgrade that moves them fails here, by name,
instead of as an import error somewhere in the agent."""

from __future__ import annotations

import importlib
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PRIVATE = "openai._vendor.httpx_aiohttp.transport"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_openai_client_is_a_tested_version_with_its_stream_where_it_was():
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    [pinned] = [Requirement(d) for d in dependencies if Requirement(d).name == "openai"]
    installed = Version(metadata.version("openai"))
    assert list(pinned.specifier.filter([installed])), f"openai {installed} is not in {pinned}"
    assert not list(pinned.specifier.filter([Version("99")])), "the range has no upper bound"
    module = importlib.import_module(PRIVATE)
    for name in ("AiohttpResponseStream", "map_aiohttp_exceptions"):
        assert hasattr(module, name), f"{PRIVATE}.{name} moved: agent/model_body.py reads it"
