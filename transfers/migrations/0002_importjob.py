# ImportJob: an import file too large for the request, read by a task; its table under RLS.

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core import rls_policies

TABLE = "transfers_importjob"


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("core", "0001_row_level_security"),  # the roles and the policies' shape
        ("transfers", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="ImportJob",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting"),
                            ("running", "Importing"),
                            ("ready", "Ready"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("file", models.FileField(blank=True, max_length=300, upload_to="imports/%Y/%m/")),
                ("size_bytes", models.PositiveBigIntegerField(default=0)),
                ("imported_count", models.PositiveIntegerField(default=0)),
                ("skipped_count", models.PositiveIntegerField(default=0)),
                ("conversation_ids", models.JSONField(blank=True, default=list)),
                ("skipped", models.JSONField(blank=True, default=list)),
                ("error_code", models.CharField(blank=True, default="", max_length=20)),
                ("error", models.CharField(blank=True, default="", max_length=300)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="import_jobs",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["owner", "-created_at"], name="importjob_owner_recent")
                ],
            },
        ),
        rls_policies.protect_table(TABLE),
    ]
