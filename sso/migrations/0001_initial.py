import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core import rls_policies

TABLE = "sso_ssolink"



class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("core", "0001_row_level_security"),  # the roles and the policies' shape
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SsoLink",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("issuer", models.CharField(max_length=500, verbose_name="issuer")),
                ("subject", models.CharField(max_length=255, verbose_name="subject")),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="linked at")),
                (
                    "last_login_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="last sign-in"),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="sso_links",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="user",
                    ),
                ),
            ],
            options={
                "verbose_name": "single sign-on link",
                "verbose_name_plural": "single sign-on links",
                "ordering": ["-created_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("issuer", "subject"), name="sso_link_issuer_subject"
                    )
                ],
            },
        ),
        rls_policies.protect_table(TABLE),
    ]
