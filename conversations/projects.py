"""Projects: the user's folders of conversations."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.errors import Conflict

from .models import Project
from .selectors import get_project_for_user


def _save(project: Project) -> Project:
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:
        raise Conflict(
            _("You already have a project named %(name)s.") % {"name": repr(project.name)}
        ) from None
    return project


def create_project(*, user: Any, name: str) -> Project:
    """Create a project of `user` (`name`: typed at the edge, `ProjectName`); names are
    unique per user."""
    return _save(Project(owner=user, name=name))


def rename_project(*, user: Any, project_id: Any, name: str) -> Project:
    """Rename one of the user's projects."""
    project = get_project_for_user(user=user, project_id=project_id)
    project.name = name
    return _save(project)


@transaction.atomic
def delete_project(*, user: Any, project_id: Any) -> None:
    """Delete one of the user's projects; its conversations stay, without a project."""
    get_project_for_user(user=user, project_id=project_id).delete()
