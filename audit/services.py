"""Writing the audit log (reads: audit/selectors.py)."""

from __future__ import annotations

import contextlib
from typing import Any

from django.db import models

from core import rls

from .models import TARGET_REPR_MAX_LENGTH, AuditEntry


def _scope_for(actor: Any) -> contextlib.AbstractContextManager[rls.Scope]:
    """Choose the scope the entry is inserted in: the caller's when it may write it."""
    scope = rls.current()
    if scope.role == rls.MAINTENANCE_ROLE:
        return rls.using(scope)
    if actor is None:
        # The system acting (a purge, a budget job): only maintenance may name nobody.
        return rls.maintenance()
    # App scope: the policy lets a user insert entries naming themselves, so write as the
    # actor (the same scope for staff in their own requests; the user signing in otherwise).
    return rls.as_user(actor.pk)


def record(
    *,
    actor: Any,
    action: str,
    target: models.Model | None = None,
    target_repr: str = "",
    detail: dict | None = None,
) -> AuditEntry:
    """Write one audit entry (actor: a user or None for the system; target: a model
    instance or None).

    Runs in the caller's transaction: an action rolled back leaves no entry.
    """
    if action not in AuditEntry.Action.values:
        raise ValueError(f"unknown audit action {action!r}")
    actor = actor if getattr(actor, "is_authenticated", False) else None
    entry = AuditEntry(
        actor_id=actor.pk if actor else None,
        actor_name=actor.get_username() if actor else "",
        action=action,
        detail=detail or {},
    )
    if target is not None:
        entry.target_type = target._meta.label_lower
        entry.target_id = str(target.pk)
        target_repr = target_repr or str(target)
    entry.target_repr = target_repr[:TARGET_REPR_MAX_LENGTH]
    with _scope_for(actor):
        entry.save(force_insert=True)
    return entry
