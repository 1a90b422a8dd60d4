"""A real OpenID Connect provider for the single sign-on tests: a second Django project
(django-oauth-toolkit), run as its own process by tests/support/oidc.py."""
