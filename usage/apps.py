from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class UsageConfig(AppConfig):
    name = "usage"
    verbose_name = _("Usage and budgets")
