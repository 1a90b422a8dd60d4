"""Start, stop and catch up with replies: claim → run (run.py) → store → announce → follow-ups.

Every websocket `message.send`, API `POST …/messages` and chat command goes through
`start_reply`, which claims the conversation's one reply slot and hands the claim to a
`ReplyRunner` (two side by side: a pair of runs answering one message, a model each).
The run is a task owned by the process, not by the socket that asked: it keeps running
when that socket closes. However it ends (finished, stopped, failed, the
process shutting down) `ReplyRunner._finish` stores the reply and frees the slot in one
transaction, then announces it once. Nothing else stores or announces a reply.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from core.db_async import db_async
from core.errors import Invalid
from core.models_on_offer import acheck_model

from ..models import Conversation, Message, ReplyRun
from ..realtime.frames import SyncStateFrame
from ..realtime.hub import PROCESS_ID, Hub, get_hub
from ..realtime.ratelimit import acheck_rate
from ..selectors import access_conversation
from ..services import NewConversation
from . import store
from .ask import Ask, check_message
from .recovery import arecover_if_stale, arecover_stale_run, build_sync_state
from .run import ErrorCallback, ReplyRunner
from .watchdog import ensure_watchdog

logger = logging.getLogger(__name__)

_aaccess_conversation = db_async(access_conversation, close_serial=False)
_aclaim_reply = db_async(store.claim_reply, close_serial=False)
_aclaim_first_reply = db_async(store.claim_first_reply, close_serial=False)
_arunning_runs = db_async(store.running_runs)
_aconversation_of_message = db_async(store.conversation_of_message, close_serial=False)


@dataclass(frozen=True)
class StartedReply:
    """The stored user message and the reply answering it."""

    user_message: Message
    run_id: uuid.UUID | None  # None: a repeated client_id whose reply is not running here
    created: bool  # False: the client_id was seen before; nothing new was stored
    _done: asyncio.Future[Message | None] = field(repr=False)
    conversation: Conversation | None = None  # as the claim left it (counters, title)
    # Side by side: the second model's reply (lane 1).
    _partner_done: asyncio.Future[Message | None] | None = field(default=None, repr=False)

    def assistant_message(self) -> Awaitable[Message | None]:
        """Wait for the stored reply (cancelling the wait leaves the reply running).

        Raises NotFound if the conversation was deleted while the reply ran.
        """
        return asyncio.shield(self._done)

    async def assistant_messages(self) -> list[Message | None]:
        """Wait for every stored reply: one, or both of a side-by-side pair (by lane)."""
        waits = [self._done] if self._partner_done is None else [self._done, self._partner_done]
        return list(await asyncio.shield(asyncio.gather(*waits)))


async def start_reply(
    *,
    user: Any,
    ask: Ask,
    conversation_id: Any = None,
    on_error: ErrorCallback | None = None,
    new_conversation: NewConversation | None = None,
) -> StartedReply:
    """Start a reply: to a new message (send), or a new version of an earlier one.

    - send: store the ask's message as the user's (once per client_id) and answer it;
    - regenerate: answer the user message `ask.message_id` answers (or is) again;
    - edit: store the ask's message beside the user message `ask.message_id`, answer it;
    - continue: go on from the cut-off reply `ask.message_id`, as a new version of it.

    `ask.model` (regenerate) writes this reply with another model than the conversation's.
    The message's attachments are ids of this conversation's unsent uploads, given to the
    new message. A message with sensitive information raises SensitiveInfo unless
    confirmed (and SENSITIVE_CHECK is not `block`); a confirmed one records the kinds it
    holds.

    With `new_conversation` (a send) the conversation is
    created with the message, in the claim's transaction: nothing refused leaves a row.
    Without `conversation_id` the conversation is the message's. Raises NotFound,
    Invalid, TooLarge, RateLimited, or Conflict(code="busy") when a reply is already
    running in the conversation; none of them stores anything. `on_error` hears
    `llm_unavailable` if the model fails.
    """
    if new_conversation is not None and ask.kind != "send":
        raise Invalid(_("A new conversation starts with a message sent."))
    sensitive_kinds = check_message(ask)
    for model in (ask.model, *ask.models):
        if model:
            await acheck_model(model)
    await acheck_rate(user_id=user.pk)
    if conversation_id is None and new_conversation is None:
        conversation_id = await _aconversation_of_message(user=user, message_id=ask.message_id)
    hub = get_hub()
    ensure_watchdog(hub)
    claimed_with = {"user": user, "ask": ask, "owner": PROCESS_ID, "sensitive": sensitive_kinds}

    async def claim() -> store.Claim:
        if new_conversation is not None:
            return await _aclaim_first_reply(
                conversation=new_conversation, run_id=uuid.uuid4(), **claimed_with
            )
        return await _aclaim_reply(
            conversation_id=conversation_id, run_id=uuid.uuid4(), **claimed_with
        )

    async def claim_and_begin() -> StartedReply:
        try:
            claimed = await claim()
        except store.Busy as busy:
            # The running reply may belong to a process that died: finish it, then go on.
            if not await arecover_stale_run(busy.run):
                raise
            claimed = await claim()
        if not claimed.created:
            return _repeated(hub, claimed)
        models = ask.models or (ask.model,)
        run = ReplyRunner(hub, claimed, on_error, model=models[0])
        partner = None
        if claimed.partner is not None:  # side by side: both begin before either streams
            partner = ReplyRunner(
                hub, claimed, on_error, model=models[1], run=claimed.partner, follows=run
            )
        run.begin()
        if partner is not None:
            partner.begin()
        return StartedReply(
            claimed.user_message,
            run.run_id,
            True,
            run.done,
            conversation=claimed.conversation,
            _partner_done=partner.done if partner is not None else None,
        )

    # Shielded: a caller that goes away (an HTTP client disconnecting) must not leave a
    # claimed run without its task; the run goes on and is stored as usual.
    return await asyncio.shield(claim_and_begin())


def _repeated(hub: Hub, claimed: store.Claim) -> StartedReply:
    """A send seen before: its reply (and its partner's), waited for if it runs here."""
    key = str(claimed.conversation.pk)
    handle = hub.run(key, claimed.run.pk) if claimed.run is not None else None
    partner = hub.run(key, claimed.partner.pk) if claimed.partner is not None else None
    running = claimed.run is not None and claimed.run.status == ReplyRun.Status.RUNNING
    if running and handle is not None:
        partner_done = partner.done if partner is not None else None
        return StartedReply(
            claimed.user_message, handle.run_id, False, handle.done, None, partner_done
        )
    done: asyncio.Future[Message | None] = hub.loop.create_future()
    done.set_result(claimed.reply)
    return StartedReply(claimed.user_message, None, False, done)


async def stop_reply(*, user: Any, conversation_id: Any) -> bool:
    """Stop the conversation's running reply (both, side by side) wherever it runs; say
    whether one was running.

    The run stores its partial text with finish_reason "stopped". Raises NotFound.
    """
    conversation = await _aaccess_conversation(user=user, conversation_id=conversation_id)
    runs = await _arunning_runs(conversation_id=conversation.pk)
    if not runs:
        return False
    recovered = [await arecover_stale_run(run) for run in runs]
    if not all(recovered):
        await get_hub().request_stop(conversation.pk)
    return True


async def sync_state(*, user: Any, conversation_id: Any, after: int) -> SyncStateFrame:
    """Return the messages after sequence number `after` and the reply in progress."""
    conversation = await _aaccess_conversation(user=user, conversation_id=conversation_id)
    await arecover_if_stale(conversation.pk)
    return await build_sync_state(conversation_id=conversation.pk, after=after)
