"""The audit log in the admin: read-only for everyone, filterable, downloadable as CSV."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase, StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.streaming import astream

from .exports import iter_csv
from .models import AuditEntry


class ActorFilter(admin.SimpleListFilter):
    """Entries by who did them (the name as it was then; the id tells renamed users apart)."""

    title = _("who")
    parameter_name = "actor"

    def lookups(self, request, model_admin):
        actors = (
            AuditEntry.objects.exclude(actor_id=None)
            .values_list("actor_id", "actor_name")
            .distinct()
            .order_by("actor_name", "actor_id")
        )
        return [("system", _("System")), *((str(pk), name) for pk, name in actors[:200])]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "system":
            return queryset.filter(actor_id=None)
        if value and value.isdigit() and len(value) < 19:
            return queryset.filter(actor_id=int(value))
        return queryset


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "who", "action", "target_type", "target_repr")
    list_display_links = ("created_at",)  # a read-only page with the entry's detail
    list_filter = ("action", ActorFilter, "target_type")
    date_hierarchy = "created_at"
    search_fields = ("actor_name", "target_repr", "target_id")
    show_full_result_count = False
    list_per_page = 50

    class Media:
        css = {"all": ("css/audit.css",)}

    @admin.display(description=_("who"), ordering="actor_name")
    def who(self, obj: AuditEntry) -> str:
        return obj.actor_name or _("System")

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        return super().changelist_view(request, {"title": _("Audit log"), **(extra_context or {})})

    # The log is append-only (the database refuses changes too): nobody adds, edits or
    # deletes an entry here, superusers included.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict:
        return {}

    def get_urls(self):
        export = self.admin_site.admin_view(self.export_csv)
        name = f"{self.opts.app_label}_{self.opts.model_name}_export"
        return [path("export.csv", export, name=name), *super().get_urls()]

    def export_csv(self, request: HttpRequest) -> HttpResponseBase:
        """Stream the entries the changelist shows with the same filters, as CSV."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseBadRequest(_("Unknown filter."))
        queryset = changelist.get_queryset(request).order_by("-created_at", "-id")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = StreamingHttpResponse(
            astream(lambda: iter_csv(queryset)), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.csv"'
        return response
