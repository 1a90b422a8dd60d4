from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from accounts import views as account_views
from conversations import views as conversation_views

urlpatterns = [
    path("", conversation_views.home, name="home"),
    path("conversations/new/", conversation_views.create, name="conversation_create"),
    path(
        "conversations/<uuid:conversation_id>/",
        conversation_views.detail,
        name="conversation",
    ),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", account_views.signup, name="signup"),
    path("settings/tokens/", account_views.tokens, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke/", account_views.revoke_token, name="token_revoke"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]
