from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VoiceConfig(AppConfig):
    name = "voice"
    verbose_name = _("voice")
