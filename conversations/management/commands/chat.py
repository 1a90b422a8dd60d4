"""Chat with the agent from a terminal through the same service the web app uses."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import translation
from django.utils.translation import gettext as _

from conversations import selectors, services, steps
from conversations.realtime.hub import aclose_hub, get_hub
from conversations.replies import Ask, start_reply, threads
from core import rls
from core.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Chat from a terminal: prints the conversation id, then answers each line read from "
        "standard input until end of file, streaming the reply."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("conversation_id", nargs="?", help="continue this conversation")
        parser.add_argument("--user", default=settings.DEMO_USERNAME, help="act as this user")
        parser.add_argument(
            "--language",
            choices=[code for code, _name in settings.LANGUAGES],
            default=settings.LANGUAGE_CODE,
            help="the language of errors and steps (default: LANGUAGE_CODE)",
        )

    def handle(self, *args, conversation_id: str | None = None, user: str = "", **opts) -> None:
        with translation.override(opts.get("language") or settings.LANGUAGE_CODE):
            try:
                owner = get_user_model().objects.get(username=user)
            except get_user_model().DoesNotExist:
                raise CommandError(
                    _("No user named %(name)r (run `manage.py demo`).") % {"name": user}
                ) from None
            with rls.as_user(owner.pk):  # the terminal acts as that user, and sees only theirs
                self._start(owner, conversation_id, opts)

    def _start(self, owner, conversation_id: str | None, opts: dict) -> None:
        try:
            if conversation_id:
                conversation = selectors.get_conversation_for_user(
                    user=owner, conversation_id=conversation_id
                )
            else:
                conversation = services.create_conversation(user=owner, title=_("Terminal chat"))
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        self.verbosity = opts.get("verbosity", 1)
        self.stdout.write(f"conversation {conversation.id}")
        self.stdout.flush()
        asyncio.run(self._chat(owner, conversation.id))

    async def _chat(self, owner, conversation_id: uuid.UUID) -> None:
        loop = asyncio.get_running_loop()
        hub = get_hub()
        printer = _Printer(self)
        await hub.join(conversation_id, printer)
        try:
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                text = line.rstrip("\n")
                if text.strip():
                    await self._turn(owner, conversation_id, text, printer)
        finally:
            await hub.leave(conversation_id, printer)
            await aclose_hub()
            await threads.aclose_agent_resources()

    async def _turn(self, owner, conversation_id: uuid.UUID, text: str, printer: _Printer) -> None:
        """Send one line through the same path as the web app (slot, rate limit, frames)."""
        try:
            started = await start_reply(
                user=owner, ask=Ask.send(text), conversation_id=conversation_id
            )
            reply = await started.assistant_message()
        except ServiceError as exc:
            self.stderr.write(_("error: %(message)s") % {"message": exc.message})
            return
        await get_hub().flushed(conversation_id)
        self.stdout.write("")
        note = steps.finish_note(reply.finish_reason, reply.parts) if reply is not None else ""
        if note:
            self.stderr.write(f"[{note}]")


class _Printer:
    """A hub socket that prints the conversation's frames to the terminal."""

    token_id = None

    def __init__(self, command: Command) -> None:
        self.command = command

    async def deliver(self, text: str, frame_type: str) -> None:
        if frame_type == "token":
            self.command.stdout.write(json.loads(text)["text"], ending="")
            self.command.stdout.flush()
        elif frame_type == "thinking" and self.command.verbosity > 1:
            frame = json.loads(text)
            self.command.stderr.write(f"[{frame['step']}] {steps.step_text(frame)}")

    async def close_with(self, code: int) -> None:
        """Nothing to close: the terminal stays."""
