from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_app", "0017_audit_rows_unchecked"),
    ]

    operations = [
        migrations.AddField(
            model_name="dreamjob",
            name="attempts",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
