from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from conversations.models import Conversation, Message

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
def test_demo_command_creates_a_user_with_conversations_in_the_sites_language(capsys):
    call_command("demo", "--if-no-users")
    out = capsys.readouterr().out
    assert "username 'demo'" in out
    demo = get_user_model().objects.get(username="demo")
    titles = set(Conversation.objects.filter(created_by=demo).values_list("title", flat=True))
    assert titles == {"Weekly meeting prep", "Trip to Lisbon", "Python question"}  # English
    assert all(c.message_count > 0 for c in Conversation.objects.all())
    # Written by hand, and labelled so: no reply claims a model, each is marked a sample.
    replies = Message.objects.filter(conversation__created_by=demo, role="assistant")
    assert replies and all(m.model == "" and m.metadata.get("sample") for m in replies)
    lisbon = Conversation.objects.get(created_by=demo, title="Trip to Lisbon")
    assert "sample" in lisbon.description.lower()


@pytest.mark.django_db
def test_a_korean_site_gets_korean_samples(settings):
    settings.LANGUAGE_CODE = "ko"
    call_command("demo", "--if-no-users")
    demo = get_user_model().objects.get(username="demo")
    titles = set(Conversation.objects.filter(created_by=demo).values_list("title", flat=True))
    assert titles == {"주간 회의 준비", "리스본 여행", "Python 질문"}
    lisbon = Conversation.objects.get(created_by=demo, title="리스본 여행")
    assert "예시" in lisbon.description  # the sample note in the same language


@pytest.mark.django_db
def test_demo_command_does_nothing_when_users_exist(alice, capsys):
    call_command("demo", "--if-no-users")
    assert not get_user_model().objects.filter(username="demo").exists()


def test_deploy_check_is_clean_in_production_mode():
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "k" * 20 + "-a-real-production-secret-key-with-entropy-42",
        "DJANGO_ALLOWED_HOSTS": "chat.example.com",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests' conftest
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
