from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SsoConfig(AppConfig):
    name = "sso"
    verbose_name = _("Single sign-on")
    default_auto_field = "django.db.models.BigAutoField"
