"""Projects: the user's folders of conversations."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from core.errors import Conflict, Invalid

from .models import Project
from .selectors import get_project_for_user

NAME_MAX_LENGTH = 100


def _clean_name(name: Any) -> str:
    if not isinstance(name, str):
        raise Invalid("Name must be a string.")
    name = " ".join(name.split())
    if not name:
        raise Invalid("Give the project a name.")
    if len(name) > NAME_MAX_LENGTH:
        raise Invalid(f"Name is longer than {NAME_MAX_LENGTH} characters.")
    return name


def _save(project: Project) -> Project:
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:
        raise Conflict(f"You already have a project named {project.name!r}.") from None
    return project


def create_project(*, user: Any, name: str) -> Project:
    """Create a project of `user`; names are unique per user."""
    return _save(Project(owner=user, name=_clean_name(name)))


def rename_project(*, user: Any, project_id: Any, name: str) -> Project:
    """Rename one of the user's projects."""
    project = get_project_for_user(user=user, project_id=project_id)
    project.name = _clean_name(name)
    return _save(project)


@transaction.atomic
def delete_project(*, user: Any, project_id: Any) -> None:
    """Delete one of the user's projects; its conversations stay, without a project."""
    get_project_for_user(user=user, project_id=project_id).delete()
