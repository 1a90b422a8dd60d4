from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from core.schemas import INSTRUCTIONS_MAX_CHARS

from .models import Theme
from .tokens import NAME_MAX_LENGTH


class SignupForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        fields = ("username",)


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=NAME_MAX_LENGTH)


class UserSettingsForm(forms.Form):
    default_model = forms.ChoiceField(label=_("Default model"), required=False)
    custom_instructions = forms.CharField(
        label=_("Custom instructions"),
        required=False,
        max_length=INSTRUCTIONS_MAX_CHARS,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text=_(
            "Added to the instructions of every conversation, e.g. who you are and how "
            "you like answers."
        ),
    )

    theme = forms.ChoiceField(
        label=_("Theme"),
        required=False,
        choices=Theme.choices,
        widget=forms.RadioSelect,
    )

    tools_enabled = forms.MultipleChoiceField(
        label=_("Tools in new conversations"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Each conversation can switch its own on or off in the message box."),
    )

    def __init__(self, *args, models=(), tools=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["default_model"].choices = [("", _("The site's default")), *models]
        if tools:
            self.fields["tools_enabled"].choices = list(tools)
        else:  # nothing on offer: no empty list to save over the user's choice
            del self.fields["tools_enabled"]
