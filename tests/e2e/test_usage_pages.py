"""The usage pages in the browser: the chart and the figures are there, and a send past the
budget is refused in the composer's error line, with nothing stored."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conversations import services
from conversations.models import Message
from usage.models import Budget
from usage.services import record_usage

from .conftest import watch
from .test_chat import _open, _send

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def spent(user, conversation, *, tokens: int, model: str = "fake-small") -> None:
    """Record that the user's replies used `tokens` today, the way stored replies do (the
    day's rollup and the month's row: on a month's last day the range is a whole month,
    read from the monthly rows)."""
    record_usage(
        user_id=user.pk,
        conversation_id=conversation.pk,
        model=model,
        tokens=(tokens - tokens // 4, tokens // 4),
        at=datetime.now(UTC),
        replies=2,
    )


def console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return errors


def test_the_usage_pages_show_a_chart_and_the_figures(new_context, alice, make_user, page_errors):
    staff = make_user("root", is_staff=True, is_superuser=True)
    conversation = services.create_conversation(user=alice, title="Trip to Jeju")
    spent(alice, conversation, tokens=1_200)
    spent(alice, conversation, tokens=800, model="fake-large")
    Budget.objects.create(user=alice, monthly_tokens=10_000)

    page = new_context(alice).new_page()
    watch(page, page_errors)
    errors = console_errors(page)
    page.goto("/usage/")
    expect(page.locator(".usage-total strong")).to_have_text("2,000")
    bars = page.locator("svg.day-bars rect.bar")
    expect(bars).to_have_count(datetime.now(UTC).day)
    assert float(bars.last.get_attribute("height")) == 100  # today is the busiest day
    expect(page.locator("#budget-meter")).to_be_visible()
    expect(page.locator(".usage-budget")).to_contain_text("8,000")  # left of 10,000
    expect(page.locator(".usage-table")).to_contain_text("fake-large")
    expect(page.locator('.settings-nav a[aria-current="page"]')).to_have_text("Usage")

    admin = new_context(staff).new_page()
    watch(admin, page_errors)
    admin_errors = console_errors(admin)
    admin.goto("/admin/")
    admin.wait_for_load_state("networkidle")
    admin_errors.clear()  # Django's admin index asks for /favicon.ico: not this page's
    admin.get_by_role("link", name="Usage of every user").click()
    expect(admin).to_have_url(re.compile(r"/admin/usage/$"))
    expect(admin.locator("svg.day-bars")).to_be_visible()
    expect(admin.locator(".usage-table").first).to_contain_text("alice")
    expect(admin.locator(".usage-table").last).to_contain_text("Trip to Jeju")
    with admin.expect_download() as download:
        admin.get_by_role("link", name="by user").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert "alice," in text and ",2000," in text
    assert errors == admin_errors == [] and page_errors == {"errors": [], "dialogs": []}


def test_a_send_past_the_budget_is_refused_in_the_composer_and_nothing_is_stored(
    new_context, alice, page_errors
):
    conversation = services.create_conversation(user=alice, title="Over budget")
    spent(alice, conversation, tokens=500)
    Budget.objects.create(user=alice, monthly_tokens=100)
    page = _open(new_context, alice, conversation)
    watch(page, page_errors)
    _send(page, "One more question, please.")
    banner = page.locator("#error-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("You have used this month's token budget")
    expect(page.locator("#composer-input")).to_have_value("One more question, please.")
    assert not Message.objects.filter(conversation=conversation).exists()
    assert page_errors["errors"] == []
