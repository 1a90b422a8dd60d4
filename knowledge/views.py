"""The documents page: upload, list, preview, delete (thin: services and selectors do the work)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from core.errors import NotFound, ServiceError

from . import checks, selectors, services
from .forms import UploadForm


def _render_index(request: HttpRequest, form: UploadForm, status: int = 200) -> HttpResponse:
    documents = selectors.list_documents(user=request.user)
    question = " ".join(request.GET.get("check", "").split())[: checks.QUESTION_MAX_CHARS]
    outcomes = checks.run_saved(user=request.user) if documents else []
    context = {
        "form": form,
        "documents": documents,
        "max_mb": settings.KNOWLEDGE_MAX_UPLOAD_BYTES // (1024 * 1024),
        "extensions": ", ".join(settings.KNOWLEDGE_ALLOWED_EXTENSIONS),
        "check": question,
        "passages": checks.passages_for(user=request.user, question=question)
        if question and "\x00" not in question
        else [],
        "outcomes": outcomes,
        "hits": sum(o.rank is not None for o in outcomes),
        "hit_at": checks.HIT_AT,
    }
    return render(request, "knowledge/index.html", context, status=status)


@require_http_methods(["POST"])
def saved_questions(request: HttpRequest) -> HttpResponse:
    """Save a question with the document that answers it, or delete a saved one."""
    try:
        if request.POST.get("action") == "delete":
            checks.delete_question(user=request.user, question_id=request.POST.get("id"))
        else:
            checks.save_question(
                user=request.user,
                question=request.POST.get("question"),
                document_id=request.POST.get("document"),
            )
    except ServiceError as exc:
        messages.error(request, exc.message)
    return redirect(reverse("documents") + "#check")


@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    """List the user's documents; upload one."""
    if request.method == "GET":
        return _render_index(request, UploadForm())
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_index(request, form, status=400)
    upload = form.cleaned_data["file"]
    try:
        services.check_upload(filename=upload.name, size=upload.size)
        document = services.upload_document(
            user=request.user,
            filename=upload.name,
            data=upload.read(),
            title=form.cleaned_data["title"],
        )
    except ServiceError as exc:
        form.add_error("file", exc.message)
        return _render_index(request, form, status=exc.status)
    messages.success(
        request,
        _("Added “%(title)s” (%(n)d chunks).")
        % {"title": document.title, "n": document.chunk_count},
    )
    return redirect("document", document_id=document.id)


def _owned_or_404(request: HttpRequest, document_id) -> object:
    try:
        return selectors.get_document_for_user(user=request.user, document_id=document_id)
    except NotFound:
        from django.http import Http404

        raise Http404(_("Document not found.")) from None


def detail(request: HttpRequest, document_id) -> HttpResponse:
    """Preview a document: its sections and how many chunks each has."""
    document = _owned_or_404(request, document_id)
    counts = selectors.count_chunks_by_section(document)
    sections = [
        s | {"chunks": counts.get(s["index"], 0)} for s in selectors.list_sections(document)
    ]
    return render(request, "knowledge/detail.html", {"document": document, "sections": sections})


@require_http_methods(["GET", "POST"])
def delete(request: HttpRequest, document_id) -> HttpResponse:
    """Ask to confirm, then delete a document."""
    document = _owned_or_404(request, document_id)
    if request.method == "GET":
        return render(request, "knowledge/delete.html", {"document": document})
    services.delete_document(user=request.user, document_id=document.id)
    messages.success(request, _("Deleted “%(title)s”.") % {"title": document.title})
    return redirect("documents")
