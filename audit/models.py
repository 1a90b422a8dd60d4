"""The audit log: what staff (and sign-ins) did, to which object, when (SPEC: issue 36).

Append-only: the app's database roles may only read and insert (core/rls_policies.py
APPEND_ONLY), so no code path, admin included, can edit or delete an entry.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

TARGET_REPR_MAX_LENGTH = 200


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        MESSAGE_DELETED = "message.deleted", _("Message deleted")
        CONVERSATION_DELETED = "conversation.deleted", _("Conversation deleted")
        REPORT_DISMISSED = "report.dismissed", _("Report dismissed")
        PRESET_PUBLISHED = "preset.published", _("Preset published")
        PRESET_UNPUBLISHED = "preset.unpublished", _("Preset unpublished")
        PROMPT_PUBLISHED = "prompt.published", _("Prompt published")
        PROMPT_UNPUBLISHED = "prompt.unpublished", _("Prompt unpublished")
        BUDGET_CHANGED = "budget.changed", _("Budget changed")
        SSO_LINKED = "sso.linked", _("Single sign-on linked")
        SSO_UNLINKED = "sso.unlinked", _("Single sign-on unlinked")
        USER_DELETED = "user.deleted", _("User deleted")

    created_at = models.DateTimeField(_("when"), auto_now_add=True, db_index=True)
    # No foreign key: an entry outlives its actor (a deleted user's actions stay on record).
    actor_id = models.BigIntegerField(_("actor id"), null=True, blank=True, db_index=True)
    actor_name = models.CharField(_("who"), max_length=150, blank=True)
    action = models.CharField(_("action"), max_length=64, choices=Action.choices, db_index=True)
    target_type = models.CharField(_("target type"), max_length=100, blank=True)
    target_id = models.CharField(_("target id"), max_length=100, blank=True)
    target_repr = models.CharField(_("target"), max_length=TARGET_REPR_MAX_LENGTH, blank=True)
    detail = models.JSONField(_("detail"), default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")
        indexes = [
            models.Index(fields=["target_type", "target_id"], name="audit_target"),
            # The list's and the CSV's order: newest first without sorting the whole table.
            models.Index(fields=["-created_at", "-id"], name="audit_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_name or '-'} {self.action}"
