from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory_app', '0006_history_keyed_chain'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='dreamreviewitem',
            index=models.Index(fields=['proposed_by', 'run_id'], name='reviewitem_proposer_run'),
        ),
        migrations.AddIndex(
            model_name='dreamreviewitem',
            index=models.Index(fields=['proposed_by', 'created_at'], name='reviewitem_proposer_time'),
        ),
    ]
