from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0014_engines"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="origin",
            field=models.CharField(default="user", max_length=16),
        ),
    ]
