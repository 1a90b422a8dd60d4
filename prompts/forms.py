"""The prompts page's form: it renders and collects; `PromptIn` judges (one validation layer)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _
from pydantic import ValidationError

from core.schemas import describe_error

from .models import COMMAND_MAX_LENGTH, CONTENT_MAX_LENGTH, TITLE_MAX_LENGTH, Prompt
from .schemas import PromptIn


class PromptForm(forms.Form):
    command = forms.CharField(
        label=_("Command"),
        required=False,
        help_text=_("Type / and this in the message box: a-z, 0-9 and -, e.g. summarize."),
        widget=forms.TextInput(
            {"maxlength": COMMAND_MAX_LENGTH, "placeholder": "summarize", "autocapitalize": "off"}
        ),
    )
    title = forms.CharField(
        label=_("Title"), required=False, widget=forms.TextInput({"maxlength": TITLE_MAX_LENGTH})
    )
    content = forms.CharField(
        label=_("Text"),
        required=False,
        strip=False,
        widget=forms.Textarea({"rows": 9, "maxlength": CONTENT_MAX_LENGTH}),
        help_text=_("Write {{name}} where a word should be asked for before it goes in the box."),
    )
    shared = forms.BooleanField(
        label=_("Share with everyone"),
        required=False,
        help_text=_("Everyone can use it; only you can change it."),
    )

    def __init__(self, *args: Any, staff: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not staff:
            del self.fields["shared"]

    def to_prompt(self) -> PromptIn | None:
        """Return the prompt the form describes, or None with the reasons on the fields."""
        data = self.cleaned_data
        raw = {name: data.get(name, "") for name in ("command", "title", "content")}
        raw["command"] = raw["command"].strip().lstrip("/")
        raw["shared"] = bool(data.get("shared"))
        try:
            return PromptIn.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field = str(error["loc"][0]) if error["loc"] else None
                self.add_error(field if field in self.fields else None, describe_error(error))
            return None


def initial_of(prompt: Prompt) -> dict[str, Any]:
    return {
        "command": prompt.command,
        "title": prompt.title,
        "content": prompt.content,
        "shared": prompt.shared,
    }
