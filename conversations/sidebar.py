"""The app shell's sidebar: pinned, projects, then conversations by recency."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from . import selectors
from .models import PROJECT_NAME_MAX_LENGTH, Conversation

SIDEBAR_SIZE = 80


@dataclass
class Sidebar:
    pinned: list[Conversation] = field(default_factory=list)
    # Each project, the conversations its folder lists, and how many it holds in all (its
    # pinned ones are listed under Pinned, but they are still the project's).
    projects: list[tuple[Any, list[Conversation], int]] = field(default_factory=list)
    recent: list[tuple[str, str, list[Conversation]]] = field(default_factory=list)
    projects_data: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    project_name_max: int = PROJECT_NAME_MAX_LENGTH


def recency_group(day: date, today: date) -> str:
    """Name the sidebar group a conversation last active on `day` falls in."""
    age = (today - day).days
    if age <= 0:
        return "today"
    if age == 1:
        return "yesterday"
    if age < 7:
        return "week"
    if age < 30:
        return "month"
    return "older"


def group_labels() -> dict[str, str]:
    return {
        "today": _("Today"),
        "yesterday": _("Yesterday"),
        "week": _("Previous 7 days"),
        "month": _("Previous 30 days"),
        "older": _("Older"),
    }


def build_sidebar(*, user: Any) -> Sidebar:
    """Return the user's unarchived conversations as the sidebar groups them."""
    rows = [
        c
        for c in selectors.list_recent_conversations(user=user, limit=SIDEBAR_SIZE)
        if c.status != Conversation.Status.ARCHIVED
    ]
    projects = selectors.list_projects(user=user)
    side = Sidebar(projects_data=[{"id": p.id, "name": p.name} for p in projects], count=len(rows))
    by_project: dict[int, list[Conversation]] = {p.id: [] for p in projects}
    held: dict[int, int] = dict.fromkeys(by_project, 0)
    buckets: dict[str, list[Conversation]] = {key: [] for key in group_labels()}
    today = timezone.localdate()
    for conversation in rows:  # newest activity first; each list keeps that order
        if conversation.project_id in held:
            held[conversation.project_id] += 1
        if conversation.pinned:
            side.pinned.append(conversation)
        elif conversation.project_id in by_project:
            by_project[conversation.project_id].append(conversation)
        else:
            day = timezone.localdate(conversation.updated_at)
            buckets[recency_group(day, today)].append(conversation)
    side.projects = [(p, by_project[p.id], held[p.id]) for p in projects]
    labels = group_labels()
    side.recent = [(key, labels[key], items) for key, items in buckets.items() if items]
    return side
