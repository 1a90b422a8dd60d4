from django.contrib import admin

from .models import Document, DocumentChunk


class DocumentChunkInline(admin.TabularInline):
    model = DocumentChunk
    fields = ("ordinal", "heading", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = (
        "title",
        "owner",
        "kind",
        "size_bytes",
        "section_count",
        "chunk_count",
        "created_at",
    )
    list_filter = ("kind", "created_at")
    search_fields = ("title", "filename", "owner__username")
    fields = (
        "id",
        "title",
        "owner",
        "filename",
        "kind",
        "size_bytes",
        "section_count",
        "chunk_count",
        "created_at",
        "text",
    )
    readonly_fields = tuple(name for name in fields if name != "title")  # staff may retitle
    inlines = [DocumentChunkInline]
    list_select_related = ("owner",)

    def has_add_permission(self, request) -> bool:
        # Documents are added by their owners, through extraction and chunking.
        return False
