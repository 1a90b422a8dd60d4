# The newest message a conversation's summary covers: automatic summaries roll on from it.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0018_message_conversation_time'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='summary_through',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='conversations.message', verbose_name='summary covers up to'),
        ),
    ]
