"""What the catalog announces for other apps to act on; the catalog depends on no other app.

``expressions_untyped`` (``table_id``): sent after the commit that stored a table whose
computed columns or watermarks have no type yet (the web process has no analyzer). The jobs
app answers it by asking a worker to type them (``jobs.dispatch``); with no receiver, or no
broker, the table stays ``expressions_resolved: false`` and nothing else depends on it.
"""

from __future__ import annotations

from django.dispatch import Signal

expressions_untyped = Signal()
