"""The page an artifact preview runs in (SPEC "Artifacts"): an `html`, `svg` or `mermaid`
code block of a reply, shown in `<iframe sandbox="allow-scripts">`.

The page is the frame's whole world: its Content-Security-Policy makes it a sandbox of
its own (an opaque origin even if opened directly: no cookies, no storage, nothing of the
app's pages or API), lets its scripts run, and sends nothing to the network unless the
person allowed it for this preview (`?network=1`: web images, styles and scripts, and
requests). The runner in it takes the block from the page that framed it
(`postMessage`) and writes it as its document (static/js/artifacts.js).
"""

from __future__ import annotations

from csp.decorators import csp_exempt
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

MERMAID = "vendor/mermaid/mermaid.min.js"


def frame_policy(mermaid_url: str, *, network: bool) -> str:
    """The frame's Content-Security-Policy."""
    web = " https: http:" if network else ""
    connect = "https: http:" if network else "'none'"
    return "; ".join(
        (
            "sandbox allow-scripts",
            "default-src 'none'",
            f"script-src 'unsafe-inline' 'unsafe-eval' {mermaid_url}{web}",
            f"style-src 'unsafe-inline'{web}",
            f"img-src data: blob:{web}",
            f"font-src data:{web}",
            f"media-src data: blob:{web}",
            f"connect-src {connect}",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self'",
        )
    )


@login_not_required  # nothing of anyone's is in it
@require_GET
@csp_exempt()
@xframe_options_sameorigin
@cache_control(private=True, max_age=3600)
def artifact_frame(request: HttpRequest) -> HttpResponse:
    mermaid_url = request.build_absolute_uri(static(MERMAID))
    network = request.GET.get("network") == "1"
    response = render(request, "conversations/artifact_frame.html", {"mermaid_url": mermaid_url})
    response["Content-Security-Policy"] = frame_policy(mermaid_url, network=network)
    response["Referrer-Policy"] = "no-referrer"
    return response
