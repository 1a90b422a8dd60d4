# When each maintenance command is next due (jobs/schedule.py).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0001_worker_beats'),
    ]

    operations = [
        migrations.CreateModel(
            name='ScheduledRun',
            fields=[
                ('name', models.CharField(max_length=64, primary_key=True, serialize=False)),
                ('due_at', models.DateTimeField()),
            ],
        ),
    ]
