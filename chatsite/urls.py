from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog, set_language

from accounts import views as account_views
from chatsite import api as site_api
from chatsite.manifest import web_manifest
from conversations import list_page
from conversations import views as conversation_views
from conversations.artifact_frame import artifact_frame
from core.health import healthz
from memories import views as memory_views
from sso import views as sso_views
from transfers import views as transfer_views
from usage import views as usage_views

urlpatterns = [
    path("", conversation_views.home, name="home"),
    path("conversations/", list_page.conversation_list, name="conversations"),
    path("conversations/new/", conversation_views.create, name="conversation_create"),
    path(
        "conversations/<uuid:conversation_id>/",
        conversation_views.detail,
        name="conversation",
    ),
    path(
        "conversations/<uuid:conversation_id>/export/",
        transfer_views.export,
        name="conversation_export",
    ),
    path(
        "conversations/<uuid:conversation_id>/messages/fragment/",
        conversation_views.older_messages_fragment,
        name="conversation_older_messages",
    ),
    path(
        "conversations/<uuid:conversation_id>/summary/fragment/",
        conversation_views.summary_fragment,
        name="conversation_summary_fragment",
    ),
    path(
        "conversations/<uuid:conversation_id>/messages/<uuid:message_id>/fragment/",
        conversation_views.message_fragment,
        name="message_fragment",
    ),
    path("documents/", include("knowledge.urls")),
    path("presets/", include("presets.urls")),
    path("prompts/", include("prompts.urls")),
    path("s/<str:token>/", login_not_required(conversation_views.shared), name="shared"),
    path("accounts/login/", sso_views.LoginView.as_view(), name="login"),
    path("accounts/oidc/login/", sso_views.oidc_login, name="sso_login"),
    path("accounts/oidc/callback/", sso_views.oidc_callback, name="sso_callback"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", account_views.signup, name="signup"),
    path("settings/", account_views.preferences, name="preferences"),
    path("settings/memory/", memory_views.memories, name="memories"),
    path("settings/tokens/", account_views.tokens, name="tokens"),
    path("settings/data/", transfer_views.data, name="data"),
    path("artifacts/frame/", artifact_frame, name="artifact_frame"),
    path("settings/tokens/<int:token_id>/revoke/", account_views.revoke_token, name="token_revoke"),
    # The language switcher works before logging in too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    path(
        "jsi18n/",
        login_not_required(JavaScriptCatalog.as_view(domain="djangojs")),
        name="javascript-catalog",
    ),
    path("manifest.webmanifest", web_manifest, name="web_manifest"),
    path("healthz", healthz, name="healthz"),
    path("usage/", usage_views.my_usage, name="usage"),
    path("admin/usage/", usage_views.staff_usage, name="staff_usage"),  # before the admin's own
    path("admin/login/", sso_views.admin_login),  # under OIDC_ONLY: the site's login page
    path("admin/", admin.site.urls),
    path("api/v1/", site_api.get_urls()),
    re_path(r"^api/(?P<rest>.*)$", site_api.not_found),
]
