"""Sign-up and the API tokens page; thin adapters over `accounts.tokens`."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ServiceError
from core.models_on_offer import list_models
from toolbox import tool_catalog
from toolbox.servers import list_servers

from .forms import ApiTokenForm, SignupForm, UserSettingsForm
from .preferences import get_user_settings, update_user_settings
from .tokens import create_api_token, list_api_tokens, revoke_api_token


@login_not_required
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if settings.OIDC_ONLY:  # accounts come from the identity provider only
        messages.error(request, _("Sign-up is off: sign in with single sign-on."))
        return redirect("login")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST or None)
    secret = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                issued = create_api_token(user=request.user, name=form.cleaned_data["name"])
            except ServiceError as exc:
                form.add_error("name", exc.message)
                status = 400
            else:
                secret = issued.secret
                form = ApiTokenForm()
        else:
            status = 400
    return render(
        request,
        "accounts/tokens.html",
        {"form": form, "secret": secret, "tokens": list_api_tokens(user=request.user)},
        status=status,
    )


@require_POST
def revoke_token(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        revoke_api_token(user=request.user, token_id=token_id)
    except ServiceError as exc:
        return render(request, "404.html", {"detail": exc.message}, status=404)
    messages.success(request, _("Token revoked."))
    return redirect("tokens")


@require_http_methods(["GET", "POST"])
def preferences(request: HttpRequest) -> HttpResponse:
    """The default model, custom instructions and the tools on in new conversations."""
    models = [(m.id, m.label) for m in list_models()]
    tools = [
        (t.id, f"{t.name} ({t.server})" if t.server else t.name)
        for t in tool_catalog.available(list_servers())
    ]
    current = get_user_settings(user=request.user)
    initial = {
        "default_model": current.default_model,
        "custom_instructions": current.custom_instructions,
        "tools_enabled": tool_catalog.enabled_ids(
            conversation_tools=None, user_tools=current.tools_enabled
        ),
        "theme": current.theme,
    }
    form = UserSettingsForm(request.POST or None, initial=initial, models=models, tools=tools)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            changes = dict(form.cleaned_data)
            if not changes.get("theme"):
                changes.pop("theme", None)  # not sent: left as it is
            try:
                update_user_settings(user=request.user, **changes)
            except ServiceError as exc:
                form.add_error(None, exc.message)
                status = 400
            else:
                messages.success(request, _("Settings saved."))
                return redirect("preferences")
        else:
            status = 400
    return render(request, "accounts/preferences.html", {"form": form}, status=status)
