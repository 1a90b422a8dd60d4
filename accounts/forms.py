from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from .tokens import NAME_MAX_LENGTH


class SignupForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        fields = ("username",)


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=NAME_MAX_LENGTH)
