"""Endpoints on projects: list, create, rename, delete."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from conversations import projects, selectors
from core.schemas import Input, errors

from ..schemas import ProjectName
from .schemas import ProjectId

router = Router(tags=["projects"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)


class ProjectIn(Input):
    name: ProjectName


class ProjectOut(Schema):
    id: int
    name: str
    created_at: str


class ProjectPage(Schema):
    items: list[ProjectOut]
    next_cursor: str | None = None


def _to_dict(project: Any) -> dict[str, Any]:
    return {"id": project.id, "name": project.name, "created_at": project.created_at.isoformat()}


@router.get("/projects", response={200: ProjectPage, **ERRORS})
def list_projects(request: HttpRequest):
    """List the user's projects by name."""
    items = [_to_dict(p) for p in selectors.list_projects(user=request.auth)]
    return {"items": items, "next_cursor": None}


@router.post("/projects", response={201: ProjectOut, **ERRORS})
def create_project(request: HttpRequest, payload: ProjectIn):
    """Create a project."""
    return Status(201, _to_dict(projects.create_project(user=request.auth, name=payload.name)))


@router.patch("/projects/{project_id}", response={200: ProjectOut, **ERRORS})
def rename_project(request: HttpRequest, project_id: ProjectId, payload: ProjectIn):
    """Rename a project."""
    project = projects.rename_project(user=request.auth, project_id=project_id, name=payload.name)
    return _to_dict(project)


@router.delete("/projects/{project_id}", response={204: None, **ERRORS})
def delete_project(request: HttpRequest, project_id: ProjectId):
    """Delete a project; its conversations stay, without a project."""
    projects.delete_project(user=request.auth, project_id=project_id)
    return Status(204, None)
