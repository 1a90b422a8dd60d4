"""Token usage, rolled up per day, user, model and conversation; monthly token budgets.

The rollup is written in the transaction that stores a reply (usage/services.py), so its
sums always equal the replies' `metadata.usage`; pages and budget checks read it, never
the messages. A conversation is named by its id only (no foreign key): deleting it does
not refund what its replies used.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH


class Counted(models.Model):
    """What one user's replies in one conversation used (the counters every rollup keeps)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation_id = models.UUIDField()
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    replies = models.IntegerField(default=0)

    class Meta:
        abstract = True


class UsageRollup(Counted):
    """What one user's replies used on one day (UTC), with one model, in one conversation."""

    day = models.DateField()
    model = models.CharField(max_length=MODEL_ID_MAX_LENGTH, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["day", "user", "model", "conversation_id"], name="usage_rollup_key"
            )
        ]
        # The user's month (budget check, /usage/); staff ranges by day.
        indexes = [
            models.Index(
                fields=["user", "day"],
                name="usage_user_day",
                include=["input_tokens", "output_tokens"],
            ),
            models.Index(fields=["day"], name="usage_day"),
        ]

    def __str__(self) -> str:
        tokens = self.input_tokens + self.output_tokens
        return f"{self.day} user {self.user_id} {self.model or '-'}: {tokens}"


class ConversationMonth(Counted):
    """What one conversation's replies used in one calendar month (UTC): the staff page's
    top conversations over long ranges read these, and the rollup only for partial months."""

    month = models.DateField()  # its first day

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["month", "user", "conversation_id"], name="usage_conversation_month_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m} {self.conversation_id}"


class Budget(models.Model):
    """A monthly token budget for one user or one group (0: no limit for them)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="token_budget",
    )
    group = models.OneToOneField(
        Group,
        verbose_name=_("group"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="token_budget",
    )
    monthly_tokens = models.PositiveBigIntegerField(
        _("monthly tokens"),
        help_text=_(
            "Input and output tokens per calendar month (UTC). 0 means no limit for this "
            "user or group."
        ),
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("token budget")
        verbose_name_plural = _("token budgets")
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="budget_user_or_group",
                violation_error_message=_("Choose either a user or a group."),
            )
        ]

    def __str__(self) -> str:
        who = self.user.get_username() if self.user_id else self.group.name
        return f"{who}: {self.monthly_tokens}"

    def clean(self) -> None:
        if (self.user_id is None) == (self.group_id is None):
            raise ValidationError(_("Choose either a user or a group."))
