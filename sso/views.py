"""The login page (with the provider's button), the redirect out and the callback back."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from django.contrib import admin, messages
from django.contrib.auth import REDIRECT_FIELD_NAME, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from . import config as sso_config
from . import provider, services
from .provider import SignInFailed

log = logging.getLogger(__name__)

# Why a sign-in failed, as the login page says it (never the provider's own words).
FAILURE_MESSAGES = {
    "state": lambda: _("The sign-in expired or was started elsewhere. Please try again."),
    "provider": lambda: _("The identity provider did not sign you in. Please try again."),
    "unreachable": lambda: _("The identity provider could not be reached. Please try again later."),
    "invalid": lambda: _("The identity provider's answer could not be verified."),
    "domain": lambda: _("Your e-mail address's domain may not sign in here."),
    "group": lambda: _("Your account is not in a group that may sign in here."),
    "inactive": lambda: _("This account is disabled."),
    "retry": lambda: _("The sign-in did not finish. Please try again."),
}


class LoginView(auth_views.LoginView):
    """Django's login page, with the provider's button; password login off under OIDC_ONLY."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if sso_config.sso_only():  # the password is never checked
            context = self.get_context_data(
                refused=_("Password login is off: sign in with single sign-on.")
            )
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        config = sso_config.current()
        context["sso"] = config
        if config is not None:
            query = {REDIRECT_FIELD_NAME: context.get("next")} if context.get("next") else {}
            context["sso_url"] = reverse("sso_login") + (f"?{urlencode(query)}" if query else "")
        return context


def _sso_step(
    view: Callable[[HttpRequest, sso_config.OidcConfig], HttpResponse],
) -> Callable[..., HttpResponse]:
    """A public GET step of signing in, given the provider's settings; 404 while single
    sign-on is not configured."""

    @login_not_required
    @require_GET
    @functools.wraps(view)
    def step(request: HttpRequest) -> HttpResponse:
        config = sso_config.current()
        if config is None:
            raise Http404
        return view(request, config)

    return step


@_sso_step
def oidc_login(request: HttpRequest, config: sso_config.OidcConfig) -> HttpResponse:
    """Send the browser to the provider (PKCE, state and nonce kept in the session)."""
    next_url = _safe_next(request, request.GET.get(REDIRECT_FIELD_NAME, ""))
    try:
        url = provider.start(
            config,
            request,
            redirect_uri=request.build_absolute_uri(reverse("sso_callback")),
            next_url=next_url,
        )
    except SignInFailed as failed:
        return _back_to_login(request, failed, next_url)
    return redirect(url)


@_sso_step
def oidc_callback(request: HttpRequest, config: sso_config.OidcConfig) -> HttpResponse:
    """Check the provider's answer, find or create the user, and log them in."""
    next_url = _safe_next(request, provider.pending_next(config, request) or "")
    try:
        identity = provider.finish(config, request)
        services.admit(config, identity)
        user = services.sign_in(config, identity)
    except SignInFailed as failed:
        return _back_to_login(request, failed, next_url)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect(next_url)


@login_not_required
def admin_login(request: HttpRequest, extra_context=None) -> HttpResponse:
    """The admin's login: the site's login page under OIDC_ONLY (no second password form)."""
    if sso_config.sso_only():
        next_url = request.GET.get(REDIRECT_FIELD_NAME) or reverse("admin:index")
        return redirect(f"{reverse('login')}?{urlencode({REDIRECT_FIELD_NAME: next_url})}")
    return admin.site.login(request, extra_context)


def _safe_next(request: HttpRequest, wanted: str) -> str:
    """Return `wanted` if it stays on this site, else the home page (no open redirect)."""
    if wanted and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return reverse("home")


def _back_to_login(request: HttpRequest, failed: SignInFailed, next_url: str) -> HttpResponse:
    messages.error(request, FAILURE_MESSAGES.get(failed.reason, FAILURE_MESSAGES["invalid"])())
    query = {REDIRECT_FIELD_NAME: next_url} if next_url != reverse("home") else {}
    return redirect(reverse("login") + (f"?{urlencode(query)}" if query else ""))
