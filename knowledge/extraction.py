"""Turn an uploaded file's bytes into text: .txt and .md as Unicode, .pdf through pypdf."""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from pathlib import PurePath

from django.utils.translation import gettext as _

from core.errors import Invalid

logger = logging.getLogger(__name__)

KINDS = {".txt": "txt", ".md": "md", ".markdown": "md", ".pdf": "pdf"}
# Legacy Korean files are often CP949 (a superset of EUC-KR); try it after UTF-8.
TEXT_ENCODINGS = ("utf-8-sig", "cp949")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Extracted:
    kind: str
    text: str


def kind_for(filename: str, allowed: tuple[str, ...]) -> str:
    """Return the document kind of `filename`, or refuse an unsupported type."""
    suffix = PurePath(filename or "").suffix.lower()
    if suffix not in allowed or suffix not in KINDS:
        names = ", ".join(sorted({s for s in allowed if s in KINDS}))
        raise Invalid(
            _("Unsupported file type %(suffix)s: upload one of %(names)s.")
            % {"suffix": repr(suffix or _("(none)")), "names": names},
            code="unsupported_type",
        )
    return KINDS[suffix]


def extract_text(*, filename: str, data: bytes, allowed: tuple[str, ...]) -> Extracted:
    """Return the text of an uploaded file; refuse empty, unreadable or textless files."""
    kind = kind_for(filename, allowed)
    if not data:
        raise Invalid(_("The file is empty."), code="empty_file")
    text = _pdf_text(data) if kind == "pdf" else _plain_text(data)
    text = normalize_text(text)
    if not text.strip():
        raise Invalid(_("The file contains no text to search."), code="empty_file")
    return Extracted(kind=kind, text=text)


def normalize_text(text: str) -> str:
    """Return `text` with unified newlines and no control characters (PostgreSQL refuses NUL)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL.sub("", text).strip("\n")


def _plain_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise Invalid(_("The file is not a text file."), code="unreadable_file")
    for encoding in TEXT_ENCODINGS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise Invalid(_("The file is not UTF-8 (or CP949) text."), code="unreadable_file")


def _pdf_text(data: bytes) -> str:
    # Checked first: pypdf is lenient and would read some junk as an empty document.
    if not data.lstrip()[:5] == b"%PDF-":
        raise Invalid(_("The file is not a PDF."), code="unreadable_file")
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Invalid(
                _("The PDF is encrypted; upload an unlocked copy."), code="unreadable_file"
            )
        pages = [page.extract_text() or "" for page in reader.pages]
    except Invalid:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        logger.info("unreadable PDF: %s", exc)
        raise Invalid(_("The PDF is damaged and cannot be read."), code="unreadable_file") from None
    if not any(page.strip() for page in pages):
        raise Invalid(
            _("The PDF has no text layer (a scan?); upload a PDF with selectable text."),
            code="empty_file",
        )
    return "\n\n".join(page.strip("\n") for page in pages)
