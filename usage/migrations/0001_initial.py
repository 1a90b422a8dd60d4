import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core import rls, rls_policies

TABLES = ["usage_usagerollup", "usage_budget"]


def backfill_and_protect(apps, schema_editor):
    """Roll up the replies stored so far, then put both tables under RLS."""
    if schema_editor.connection.vendor != "postgresql":  # SQLite has no RLS; no backfill
        return
    from usage.backfill import backfill_rollup

    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        )
        if not cursor.fetchone()[0]:
            # The owner obeys the messages' forced RLS: read them as maintenance (all rows).
            cursor.execute(
                f"GRANT SELECT, INSERT, UPDATE ON usage_usagerollup TO {rls.MAINTENANCE_ROLE}"
            )
            cursor.execute(f"SET LOCAL ROLE {rls.MAINTENANCE_ROLE}")
        backfill_rollup(cursor)
        cursor.execute("RESET ROLE")
        for table in TABLES:
            for sql in rls_policies.protect(table):
                cursor.execute(sql)


def unprotect(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            for table in TABLES:
                for sql in rls_policies.unprotect(table):
                    cursor.execute(sql)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("conversations", "0013_conversation_tools"),  # the replies it rolls up
        ("core", "0001_row_level_security"),  # the roles and the policies' shape
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="UsageRollup",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("model", models.CharField(blank=True, max_length=100)),
                ("conversation_id", models.UUIDField()),
                ("input_tokens", models.BigIntegerField(default=0)),
                ("output_tokens", models.BigIntegerField(default=0)),
                ("replies", models.IntegerField(default=0)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["user", "day"],
                        include=["input_tokens", "output_tokens"],
                        name="usage_user_day",
                    ),
                    models.Index(fields=["day"], name="usage_day"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("day", "user", "model", "conversation_id"),
                        name="usage_rollup_key",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Budget",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "monthly_tokens",
                    models.PositiveBigIntegerField(
                        help_text=(
                            "Input and output tokens per calendar month (UTC). 0 means no limit"
                            " for this user or group."
                        ),
                        verbose_name="monthly tokens",
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "group",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="token_budget",
                        to="auth.group",
                        verbose_name="group",
                    ),
                ),
                (
                    "user",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="token_budget",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
            ],
            options={
                "verbose_name": "token budget",
                "verbose_name_plural": "token budgets",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("group__isnull", True), ("user__isnull", False)),
                            models.Q(("group__isnull", False), ("user__isnull", True)),
                            _connector="OR",
                        ),
                        name="budget_user_or_group",
                        violation_error_message="Choose either a user or a group.",
                    )
                ],
            },
        ),
        migrations.RunPython(backfill_and_protect, unprotect),
    ]
