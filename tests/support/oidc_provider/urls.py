from django.contrib.auth.views import LoginView
from django.urls import include, path

urlpatterns = [
    path("accounts/login/", LoginView.as_view(template_name="provider_login.html")),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
]
