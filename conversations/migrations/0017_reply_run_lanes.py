# The second run of a side-by-side pair: one running run per lane, not per conversation.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0016_feedback_reasons'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='replyrun',
            name='reply_run_one_running_per_conversation',
        ),
        migrations.AddField(
            model_name='replyrun',
            name='lane',
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddConstraint(
            model_name='replyrun',
            constraint=models.UniqueConstraint(condition=models.Q(('status', 'running')), fields=('conversation', 'lane'), name='reply_run_one_running_per_lane'),
        ),
    ]
