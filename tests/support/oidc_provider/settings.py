"""The test provider's settings: django-oauth-toolkit with OpenID Connect, PKCE required."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "test-provider-only-" + "x" * 40
DEBUG = False
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "tests.support.oidc_provider.urls"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OIDC_PROVIDER_DB"]}
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# The app's session cookie is also called `sessionid` on the same host (another port).
SESSION_COOKIE_NAME = "provider_session"
CSRF_COOKIE_NAME = "provider_csrftoken"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; test users only

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ["OIDC_PROVIDER_KEY"],
    # Every URL in the discovery document (and `iss`) names the front the tests put before
    # this process (tests/support/oidc.py), so all traffic passes through it.
    "OIDC_ISS_ENDPOINT": os.environ["OIDC_PROVIDER_ISSUER"],
    "PKCE_REQUIRED": True,
    "ALLOW_LOCALHOST_LOOPBACK": True,  # the app's callback on a test server's free port
    "OAUTH2_VALIDATOR_CLASS": "tests.support.oidc_provider.validator.ClaimsValidator",
    "SCOPES": {"openid": "OpenID Connect", "profile": "Profile", "email": "E-mail"},
}
