from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class UploadForm(forms.Form):
    file = forms.FileField(
        label=_("File"),
        widget=forms.ClearableFileInput(
            attrs={"accept": ",".join(settings.KNOWLEDGE_ALLOWED_EXTENSIONS)}
        ),
    )
    title = forms.CharField(label=_("Title (optional)"), max_length=200, required=False)
