from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0011_worker_stream_slots"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="access",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
