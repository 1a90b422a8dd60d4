"""Run the test provider: migrate its SQLite file, add the clients and users, serve HTTP.

python -m tests.support.oidc_provider.serve PORT, with DJANGO_SETTINGS_MODULE set to
tests.support.oidc_provider.settings and the OIDC_PROVIDER_* variables settings.py reads.
The clients and users are described by OIDC_PROVIDER_SEED (JSON: {"clients": [{client_id,
client_secret, redirect_uris}], "users": [{username, password, email, groups, unverified}]}).
"""

from __future__ import annotations

import json
import os
import sys

import django


def seed(spec: dict) -> None:
    from django.contrib.auth.models import Group, User
    from oauth2_provider.models import Application

    for client in spec["clients"]:
        Application.objects.create(
            name=client["client_id"],
            client_id=client["client_id"],
            client_secret=client["client_secret"],
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=" ".join(client["redirect_uris"]),
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
    for person in spec["users"]:
        user = User.objects.create_user(
            person["username"],
            email=person["email"],
            password=person["password"],
            last_name="unverified" if person.get("unverified") else "",
        )
        for name in person.get("groups", []):
            user.groups.add(Group.objects.get_or_create(name=name)[0])


def main() -> None:
    port = int(sys.argv[1])
    django.setup()
    from django.core.management import call_command
    from django.core.servers.basehttp import run
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0, interactive=False)
    seed(json.loads(os.environ["OIDC_PROVIDER_SEED"]))
    run("127.0.0.1", port, get_wsgi_application(), threading=True)


if __name__ == "__main__":
    main()
