"""Reply runs as rows; sequence numbers from a counter that never goes back.

Existing data is not renumbered: each conversation's counter starts at its highest
number, and a reply that was running when this ran becomes a running ReplyRun whose
heartbeat has lapsed, so the first process that looks stores it as `interrupted`.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Max, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone


def forward(apps, schema_editor):
    Conversation = apps.get_model("conversations", "Conversation")
    Message = apps.get_model("conversations", "Message")
    ReplyRun = apps.get_model("conversations", "ReplyRun")
    highest = (
        Message.objects.filter(conversation=OuterRef("pk"))
        .values("conversation")
        .annotate(n=Max("sequence_number"))
        .values("n")
    )
    # An empty conversation's counter starts at 0 (the column is NOT NULL).
    Conversation.objects.update(last_sequence_number=Coalesce(Subquery(highest[:1]), Value(0)))
    running = Conversation.objects.filter(active_run_id__isnull=False)
    for conversation in running.iterator():
        question = (
            Message.objects.filter(conversation=conversation, role="user")
            .order_by("-sequence_number")
            .first()
        )
        # A slot whose reply was stored already (a crash between the two) is a finished run.
        stored = Message.objects.filter(pk=conversation.active_run_id).exists()
        ReplyRun.objects.create(
            id=conversation.active_run_id,
            conversation=conversation,
            reply_to=question,
            status="finished" if stored else "running",
            heartbeat_at=conversation.active_run_heartbeat or conversation.updated_at,
            finished_at=timezone.now() if stored else None,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0002_search'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='last_sequence_number',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='message',
            name='run_id',
            field=models.UUIDField(blank=True, db_index=True, null=True),
        ),
        migrations.CreateModel(
            name='ReplyRun',
            fields=[
                ('id', models.UUIDField(editable=False, primary_key=True, serialize=False)),
                ('status', models.CharField(choices=[('running', 'Running'), ('finished', 'Finished')], default='running', max_length=16)),
                ('owner', models.CharField(blank=True, max_length=100)),
                ('heartbeat_at', models.DateTimeField()),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reply_runs', to='conversations.conversation')),
                ('reply_to', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='reply_runs', to='conversations.message')),
            ],
            options={
                'indexes': [models.Index(condition=models.Q(('status', 'running')), fields=['heartbeat_at'], name='reply_run_running')],
                'constraints': [models.UniqueConstraint(condition=models.Q(('status', 'running')), fields=('conversation',), name='reply_run_one_running_per_conversation')],
            },
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='conversation',
            name='active_run_heartbeat',
        ),
        migrations.RemoveField(
            model_name='conversation',
            name='active_run_id',
        ),
    ]
