"""The presets page's form: it renders and collects; `PresetIn` judges (one validation layer)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from pydantic import ValidationError

from .models import ICON_MAX_LENGTH, MAX_STARTERS, NAME_MAX_LENGTH, Preset
from .schemas import PresetIn

TOOLS_DEFAULT, TOOLS_CHOSEN = "default", "chosen"


class PresetForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), required=False, widget=forms.TextInput({"maxlength": NAME_MAX_LENGTH})
    )
    icon = forms.CharField(
        label=_("Icon"),
        required=False,
        help_text=_("An emoji or up to a few letters."),
        widget=forms.TextInput({"maxlength": ICON_MAX_LENGTH, "placeholder": "🧭"}),
    )
    instructions = forms.CharField(
        label=_("Instructions"),
        required=False,
        strip=False,
        widget=forms.Textarea({"rows": 7}),
        help_text=_("What the assistant should know and how it should answer."),
    )
    model = forms.ChoiceField(label=_("Model"), required=False)
    temperature = forms.CharField(
        label=_("Temperature"),
        required=False,
        help_text=_("0 to 2; blank: the model's default. Lower is steadier, higher more varied."),
        widget=forms.NumberInput({"min": 0, "max": 2, "step": 0.1}),
    )
    tools_mode = forms.ChoiceField(
        label=_("Tools"),
        required=False,
        initial=TOOLS_DEFAULT,
        choices=[(TOOLS_DEFAULT, _("My default tools")), (TOOLS_CHOSEN, _("These tools:"))],
        widget=forms.RadioSelect,
    )
    tools = forms.MultipleChoiceField(
        label=_("Tools"), required=False, widget=forms.CheckboxSelectMultiple
    )
    knowledge_scope = forms.ChoiceField(
        label=_("Knowledge"),
        required=False,
        initial=Preset.Scope.ALL,
        choices=Preset.Scope.choices,
        widget=forms.RadioSelect,
    )
    project = forms.ChoiceField(label=_("Project"), required=False)
    documents = forms.MultipleChoiceField(
        label=_("Documents"), required=False, widget=forms.CheckboxSelectMultiple
    )
    starters = forms.CharField(
        label=_("Starter prompts"),
        required=False,
        widget=forms.Textarea({"rows": 4}),
        help_text=lazy(
            lambda: (
                gettext("One per line, up to %(n)d: shown as buttons on a new chat.")
                % {"n": MAX_STARTERS}
            ),
            str,
        )(),
    )
    shared = forms.BooleanField(
        label=_("Share with everyone"),
        required=False,
        help_text=_("Everyone can start chats from it; only you can change it."),
    )

    def __init__(
        self, *args: Any, models=(), tools=(), projects=(), documents=(), staff=False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", _("The default model")), *models]
        self.fields["tools"].choices = list(tools)
        self.fields["project"].choices = [("", "—"), *projects]
        self.fields["documents"].choices = list(documents)
        if not tools:
            del self.fields["tools_mode"], self.fields["tools"]
        if not staff:
            del self.fields["shared"]

    def to_preset(self) -> PresetIn | None:
        """Return the preset the form describes, or None with the reasons on the fields."""
        data = self.cleaned_data
        scope = data.get("knowledge_scope") or "all"
        ids: list[Any] = []
        if scope == "project" and data.get("project"):
            ids = [data["project"]]
        elif scope == "documents":
            ids = list(data.get("documents") or [])
        raw: dict[str, Any] = {
            "name": data.get("name", ""),
            "icon": data.get("icon", ""),
            "instructions": data.get("instructions", ""),
            "model": data.get("model", ""),
            "temperature": _number(data.get("temperature", "")),
            "knowledge": {"scope": scope, "ids": ids},
            "starters": [line for line in data.get("starters", "").splitlines() if line.strip()],
            "shared": bool(data.get("shared")),
        }
        if "tools" in self.fields:
            chosen = data.get("tools_mode") == TOOLS_CHOSEN
            raw["tools"] = list(data.get("tools") or []) if chosen else None
        try:
            return PresetIn.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field = str(error["loc"][0]) if error["loc"] else None
                field = {"knowledge": "knowledge_scope"}.get(field, field)
                message = error["msg"].removeprefix("Value error, ")
                self.add_error(field if field in self.fields else None, message)
            return None


def _number(text: str) -> Any:
    """The temperature as typed: blank is none; a number is a float; else the text (refused)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def initial_of(preset: Preset) -> dict[str, Any]:
    """Return the form's initial values for an existing preset."""
    ids = [str(i) for i in preset.knowledge_ids]
    return {
        "name": preset.name,
        "icon": preset.icon,
        "instructions": preset.instructions,
        "model": preset.model,
        "temperature": "" if preset.temperature is None else preset.temperature,
        "tools_mode": TOOLS_DEFAULT if preset.tools is None else TOOLS_CHOSEN,
        "tools": preset.tools or [],
        "knowledge_scope": preset.knowledge_scope,
        "project": ids[0] if preset.knowledge_scope == "project" and ids else "",
        "documents": ids if preset.knowledge_scope == "documents" else [],
        "starters": "\n".join(preset.starters),
        "shared": preset.shared,
    }
