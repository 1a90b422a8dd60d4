"""Temporary: screenshots of the import round-2 pages at every size/scheme/language."""
from pathlib import Path
import pytest
from conversations import imports
from conversations.models import Conversation
from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parents[1] / "conversations" / "import_fixtures"
OUT = Path("/tmp/shots")

@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1400, 900), (390, 844)])
def test_shots(new_context, alice, page_errors, locale, scheme, size):
    with open(FIXTURES / "openwebui_reasoning.json", "rb") as f:
        tomato = imports.import_file(user=alice, source=f).conversations[0]
    with open(FIXTURES / "chatgpt_browsing.json", "rb") as f:
        busan = imports.import_file(user=alice, source=f).conversations[0]
    page = new_context(alice, locale=locale, color_scheme=scheme, viewport={"width": size[0], "height": size[1]}).new_page()
    watch(page, page_errors)
    tag = f"{size[0]}-{scheme}-{locale[:2]}"
    page.goto(f"/conversations/{tomato.id}/")
    page.locator("details.reasoning summary").first.click()
    page.locator("details.details summary").first.click()
    page.screenshot(path=str(OUT / f"tomato-{tag}.png"), full_page=False)
    page.goto(f"/conversations/{busan.id}/")
    page.locator("li.message.assistant").first.scroll_into_view_if_needed()
    page.locator("details.details summary").first.click()
    page.screenshot(path=str(OUT / f"busan-{tag}.png"), full_page=True)
    page.goto("/conversations/")
    page.set_input_files("#import-file", str(FIXTURES / "chatgpt_one_damaged.json"))
    page.locator("#import-report").wait_for(state="visible", timeout=20000)
    page.screenshot(path=str(OUT / f"report-{tag}.png"))
    assert page_errors == {"errors": [], "dialogs": []}
