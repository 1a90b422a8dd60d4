"""Chat with a conversation from a terminal over the websocket, streaming (SPEC: WebSocket).

    uv run python examples/ws_client.py --token cht_… --conversation <id>
        [--url ws://127.0.0.1:8000]

Create the token at /settings/tokens/. Each line you type is sent as `message.send`;
the reply streams as it is written. Type /stop to stop a reply, /quit to leave. If the
connection drops, the client reconnects and catches up with `sync`, so every reply
ends up on screen exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import uuid

import websockets


class Reply:
    """Stitch a reply from `token` chunks by `index`: nothing missing, nothing repeated."""

    def __init__(self, run_id: str, text: str = "") -> None:
        self.run_id = run_id
        self.text = text

    def add(self, index: int, chunk: str) -> str:
        """Take one chunk; return the part not seen yet."""
        if index > len(self.text):
            raise ValueError(f"gap: expected index {len(self.text)}, got {index}")
        new = chunk[len(self.text) - index :]
        self.text += new
        return new


class Client:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}"}
        self.last_seq = 0  # highest sequence_number shown
        self.reply: Reply | None = None

    def show_message(self, message: dict) -> None:
        if message["sequence_number"] <= self.last_seq:
            return  # already on screen
        self.last_seq = message["sequence_number"]
        if message["role"] == "assistant" and self.reply and self.reply.run_id == message["id"]:
            self.reply = None  # streamed already
            print(f"\n[{message['finish_reason']}]")
        elif message["role"] == "assistant":
            print(f"assistant: {message['content']}\n[{message['finish_reason']}]")

    def handle(self, frame: dict) -> None:
        kind = frame["type"]
        if kind == "token":
            if self.reply is None or self.reply.run_id != frame["run_id"]:
                self.reply = Reply(frame["run_id"])
                print("assistant: ", end="")
            print(self.reply.add(frame["index"], frame["text"]), end="", flush=True)
        elif kind == "sync.state":
            for message in frame["messages"]:
                self.show_message(message)
            generation = frame["generation"]
            if generation:
                self.reply = Reply(generation["run_id"], generation["text"])
                print(f"assistant (so far): {generation['text']}", end="", flush=True)
        elif kind == "message.created":
            if frame["message"]["role"] == "user":
                self.last_seq = max(self.last_seq, frame["message"]["sequence_number"])
            else:
                self.show_message(frame["message"])
        elif kind == "thinking":
            print(f"  … {frame['step']}: {frame['content']}", file=sys.stderr)
        elif kind == "error":
            print(f"\n! {frame['code']}: {frame['detail']}", file=sys.stderr)

    async def receive(self, ws) -> None:
        async for raw in ws:
            self.handle(json.loads(raw))

    async def type_lines(self, ws) -> None:
        loop = asyncio.get_running_loop()
        while True:
            raw = await loop.run_in_executor(None, sys.stdin.readline)
            line = raw.strip()
            if raw == "" or line == "/quit":  # end of input, or asked to leave
                return
            if not line:
                continue
            if line == "/stop":
                await ws.send(json.dumps({"type": "generation.stop"}))
                continue
            frame = {"type": "message.send", "content": line, "client_id": uuid.uuid4().hex}
            await ws.send(json.dumps(frame, ensure_ascii=False))

    async def run(self) -> None:
        async for ws in websockets.connect(self.url, additional_headers=self.headers):
            try:
                # Catch up first: what was stored while away, and the reply in progress.
                await ws.send(json.dumps({"type": "sync", "after": self.last_seq}))
                receiver = asyncio.create_task(self.receive(ws))
                typer = asyncio.create_task(self.type_lines(ws))
                done, _ = await asyncio.wait({receiver, typer}, return_when="FIRST_COMPLETED")
                if typer in done:
                    receiver.cancel()
                    return
                typer.cancel()
                await receiver  # raises ConnectionClosed: reconnect
            except websockets.ConnectionClosed as exc:
                if exc.rcvd and exc.rcvd.code in (4401, 4404):
                    print(f"closed {exc.rcvd.code}: check the token and conversation id")
                    return
                print("\n(reconnecting…)", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", required=True, help="an API token (cht_…)")
    parser.add_argument("--conversation", required=True, help="the conversation id")
    parser.add_argument("--url", default="ws://127.0.0.1:8000", help="the server")
    args = parser.parse_args()
    url = f"{args.url.rstrip('/')}/ws/conversations/{args.conversation}/"
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(Client(url, args.token).run())


if __name__ == "__main__":
    main()
