"""Which provider account (issuer + subject) signs in as which user."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

# OpenID Connect caps `sub` at 255 ASCII characters; an issuer is a URL.
SUBJECT_MAX_LENGTH = 255
ISSUER_MAX_LENGTH = 500


class SsoLink(models.Model):
    """One provider account linked to one user: later sign-ins find the user by it alone."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="sso_links",
        verbose_name=_("user"),
    )
    issuer = models.CharField(_("issuer"), max_length=ISSUER_MAX_LENGTH)
    subject = models.CharField(_("subject"), max_length=SUBJECT_MAX_LENGTH)
    created_at = models.DateTimeField(_("linked at"), auto_now_add=True)
    last_login_at = models.DateTimeField(_("last sign-in"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("single sign-on link")
        verbose_name_plural = _("single sign-on links")
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_link_issuer_subject")
        ]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject}"
