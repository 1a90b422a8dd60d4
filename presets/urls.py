from __future__ import annotations

from django.urls import path

from . import views

urlpatterns = [
    path("", views.presets, name="presets"),
    path("new/", views.edit, name="preset_new"),
    path("<uuid:preset_id>/edit/", views.edit, name="preset_edit"),
    path("<uuid:preset_id>/delete/", views.delete, name="preset_delete"),
]
