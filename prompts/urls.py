from __future__ import annotations

from django.urls import path

from . import views

urlpatterns = [
    path("", views.prompts, name="prompts"),
    path("new/", views.edit, name="prompt_new"),
    path("<uuid:prompt_id>/edit/", views.edit, name="prompt_edit"),
    path("<uuid:prompt_id>/delete/", views.delete, name="prompt_delete"),
]
