"""In the browser: a reply's TeX is typeset by KaTeX and its ```mermaid block drawn by
Mermaid, both from our static files and under the site's Content-Security-Policy; a
malformed formula or diagram shows its source and breaks nothing."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations import services, shares
from tests.support import seed

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPLY = r"""Euler: $e^{i\pi} + 1 = 0$, and \(a_1 + b_2\) in brackets; prices $5 and $10 stay text.

$$
\int_0^1 x^2\,dx = \frac{1}{3}
$$

A broken one: $\frac{1}{$ (left as it was written).

```mermaid
flowchart LR
  A[Question] --> B{Known?}
  B -->|yes| C[Answer]
  B -->|no| D[Search]
```

```mermaid
sequenceDiagram
  Alice->>Bob: <img src=x onerror=alert(1)> hello
  Bob-->>Alice: <b style="color:red">hi</b>
```

```mermaid
flowchart LR
  A --> --> ((
```
"""

# Recorded in the page before any of its scripts run: every CSP violation, whatever
# the console shows of it.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def _shared_url(user) -> str:
    conversation = services.create_conversation(user=user, title="Rich reply")
    seed.add_message(
        conversation_id=conversation.id, role="user", content="Show me math", created_by=user
    )
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content=REPLY,
        model="offline",
        finish_reason="end_turn",
    )
    share = shares.create_share(user=user, conversation_id=conversation.id)
    return f"/s/{share.token}/"


def _open(new_context, url: str, color_scheme: str, sink: dict):
    context = new_context(color_scheme=color_scheme)
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    watch(page, sink)
    page.on(
        "console",
        lambda message: sink["console"].append(message.text) if message.type == "error" else None,
    )
    page.goto(url, wait_until="domcontentloaded")  # "load" waits for Mermaid (5 MB) too
    return page


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_math_and_diagrams_render_on_a_shared_page_under_the_csp(
    new_context, alice, page_errors, color_scheme
):
    page_errors["console"] = []
    page = _open(new_context, _shared_url(alice), color_scheme, page_errors)
    reply = page.locator(".message.assistant .content")
    # Mermaid is 5 MB, from the debug static server of a busy test machine.
    expect(reply.locator(".mermaid-diagram img").first).to_be_visible(timeout=60_000)

    # Inline, bracketed and display math are typeset; the prices are not math.
    expect(reply.locator('.math[data-rich="done"] .katex')).to_have_count(3)
    expect(reply.locator("div.math.display .katex-display")).to_have_count(1)
    expect(reply).to_contain_text("prices $5 and $10 stay text")
    # The malformed formula shows its source, as code.
    broken = reply.locator('.math[data-rich="error"] code.math-source')
    expect(broken).to_have_text(r"$\frac{1}{$")

    # The flowchart and the sequence diagram (whose hostile labels stay text) are images
    # with a size; the malformed diagram stays source.
    images = reply.locator(".mermaid-diagram img")
    expect(images).to_have_count(2)
    for diagram in images.all():
        expect(diagram).to_have_js_property("complete", True)
        assert diagram.evaluate("img => img.naturalWidth") > 100
        box = diagram.bounding_box()
        assert box["width"] > 100 and box["height"] > 20
        assert diagram.get_attribute("src").startswith("data:image/svg+xml")
    assert "flowchart LR" in images.first.get_attribute("alt")
    bad = reply.locator('pre > code.language-mermaid[data-rich="error"]')
    expect(bad).to_have_count(1)
    expect(bad).to_contain_text("A --> --> ((")
    drawn = reply.locator('pre > code.language-mermaid[data-rich="done"]')
    expect(drawn).to_have_count(2)
    expect(drawn.first).to_be_hidden()
    expect(bad).to_be_visible()

    # KaTeX's stylesheet and fonts came from our static files.
    assert page.evaluate(
        "() => [...document.styleSheets].some(s => (s.href || '').endsWith"
        "('/static/vendor/katex/katex.min.css'))"
    )
    assert page.evaluate("() => document.fonts.check('16px KaTeX_Main')")

    # A second call finds nothing new to do.
    before = reply.inner_html()
    page.evaluate("async () => (await import('/static/js/rich.js')).renderRich(document)")
    assert reply.inner_html() == before

    page.screenshot(
        path="/tmp/rich.png" if color_scheme == "light" else f"/tmp/rich-{color_scheme}.png",
        full_page=True,
    )
    assert page.evaluate("() => window.cspViolations") == []
    assert page_errors == {"errors": [], "dialogs": [], "console": []}


def test_math_and_diagrams_render_in_a_conversation_and_its_summary(
    new_context, alice, page_errors
):
    from conversations.models import Conversation

    conversation = services.create_conversation(user=alice, title="Math")
    seed.add_message(conversation_id=conversation.id, role="user", content="Show me")
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content=REPLY,
        model="offline",
        finish_reason="end_turn",
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="## Main points\n- $a^2+b^2=c^2$"
    )
    page_errors["console"] = []
    context = new_context(alice)
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    watch(page, page_errors)
    page.on(
        "console", lambda m: page_errors["console"].append(m.text) if m.type == "error" else None
    )
    page.goto(f"/conversations/{conversation.id}/", wait_until="domcontentloaded")
    reply = page.locator("li.message.assistant .content")
    expect(reply.locator(".mermaid-diagram img").first).to_be_visible(timeout=60_000)
    expect(reply.locator('.math[data-rich="done"] .katex')).to_have_count(3)
    expect(page.locator('#summary-text .math[data-rich="done"] .katex')).to_have_count(1)
    assert page.evaluate("() => window.cspViolations") == []
    assert page_errors == {"errors": [], "dialogs": [], "console": []}


def test_a_formula_too_long_to_typeset_shows_as_source_and_the_page_stays_responsive(
    new_context, alice, page_errors
):
    # 8,000 terms: KaTeX would keep the tab busy for seconds.
    huge = "+".join(f"x_{{{n}}}" for n in range(8000))
    conversation = services.create_conversation(user=alice, title="Huge formula")
    seed.add_message(conversation_id=conversation.id, role="user", content="Sum", created_by=alice)
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content=f"Small: $a+b$. Huge: $${huge}$$",
        model="offline",
        finish_reason="end_turn",
    )
    page_errors["console"] = []
    context = new_context(alice)
    page = context.new_page()
    watch(page, page_errors)
    page.goto(f"/conversations/{conversation.id}/")
    reply = page.locator(".message.assistant .content")
    expect(reply.locator('.math[data-rich="done"] .katex')).to_have_count(1, timeout=20_000)
    source = reply.locator('.math[data-rich="error"] code.math-source')
    expect(source).to_have_count(1)
    assert source.inner_text().startswith("$$x_{0}+x_{1}")
    # The page answers at once: a click on the sidebar toggle is handled within 500 ms.
    took = page.evaluate(
        """() => new Promise((resolve) => {
            const started = performance.now();
            setTimeout(() => resolve(performance.now() - started), 0);
        })"""
    )
    assert took < 500
