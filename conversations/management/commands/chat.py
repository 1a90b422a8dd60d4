"""Chat with the agent from a terminal through the same service the web app uses."""

from __future__ import annotations

import asyncio
import sys
import uuid

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agent.tokens import estimate_tokens
from conversations import agent_service, selectors, services
from conversations.errors import ServiceError

from .demo import DEMO_USERNAME


class Command(BaseCommand):
    help = (
        "Chat from a terminal: prints the conversation id, then answers each line read from "
        "standard input until end of file, streaming the reply."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("conversation_id", nargs="?", help="continue this conversation")
        parser.add_argument("--user", default=DEMO_USERNAME, help="act as this user")

    def handle(self, *args, conversation_id: str | None = None, user: str = "", **opts) -> None:
        try:
            owner = get_user_model().objects.get(username=user)
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user named {user!r} (run `manage.py demo`).") from None
        try:
            if conversation_id:
                conversation = selectors.get_conversation_for_user(
                    user=owner, conversation_id=conversation_id
                )
            else:
                conversation = services.create_conversation(user=owner, title="Terminal chat")
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        self.verbosity = opts.get("verbosity", 1)
        self.stdout.write(f"conversation {conversation.id}")
        self.stdout.flush()
        asyncio.run(self._chat(owner, conversation.id))

    async def _chat(self, owner, conversation_id: uuid.UUID) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                text = line.rstrip("\n")
                if text.strip():
                    await self._turn(owner, conversation_id, text)
        finally:
            await agent_service.aclose_agent_resources()

    async def _turn(self, owner, conversation_id: uuid.UUID, text: str) -> None:
        try:
            stored = await sync_to_async(services.append_message)(
                conversation_id=conversation_id,
                role="user",
                content=text,
                created_by=owner,
                tokens_used=estimate_tokens(text),
            )
        except ServiceError as exc:
            self.stderr.write(f"error: {exc.message}")
            return
        conversation = await selectors.aget_conversation_for_user(
            user=owner, conversation_id=conversation_id
        )

        async def show(event) -> None:
            if event["type"] == "token":
                self.stdout.write(event["text"], ending="")
                self.stdout.flush()
            elif event["type"] == "thinking" and self.verbosity > 1:
                self.stderr.write(f"[{event['step']}] {event['content']}")

        reply = await agent_service.arun_agent_turn(
            conversation=conversation,
            user_message=stored.message,
            reply_id=uuid.uuid4(),
            on_event=show,
        )
        self.stdout.write("")
        if reply.finish_reason not in {"end_turn", ""}:
            self.stderr.write(f"[{reply.finish_reason}]")
