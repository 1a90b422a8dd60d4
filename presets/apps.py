from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PresetsConfig(AppConfig):
    name = "presets"
    verbose_name = _("presets")
