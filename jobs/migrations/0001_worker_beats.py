# The task workers alive (jobs/recovery.py).

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='TaskWorker',
            fields=[
                ('id', models.CharField(max_length=100, primary_key=True, serialize=False)),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('beat_at', models.DateTimeField()),
            ],
        ),
    ]
