"""Stores what ``ANALYZE TABLE … COMPUTE STATISTICS`` computed on its table, inside the
job's FINISHED transition (a step of ``jobs.steps``): the figures a worker staged on the job
(``engine.analyze_table``) reach the table only if the job finishes, and a table that
cannot take them (dropped meanwhile, no longer the user's to change) fails the job."""

from __future__ import annotations

from catalog import access as catalog_access
from catalog import selectors
from catalog import services as catalog_services
from core.errors import CoreError
from core.identifiers import quote_path
from core.jobstate import JobView, Record
from core.planner import Action
from jobs.models import Job

STAGING_KEY = "statistics"
KIND = "ddl"  # the job kind of ANALYZE TABLE


def store_statistics(job: JobView, record: Record) -> None:
    """FINISHED: the figures the job staged become the table's statistics."""
    if job.kind != KIND or job.plan is None or job.plan.action != Action.ANALYZE_TABLE:
        return
    row = Job.objects.select_related("user").get(pk=job.id)
    staged = (row.staging or {}).get(STAGING_KEY)
    if not isinstance(staged, dict):
        raise CoreError("The job finished without the statistics it computed.")
    parts = [str(part) for part in job.plan.args["identifier"]]
    table = selectors.get_table(*parts, access=catalog_access.access_for(row.user))
    catalog_services.table_store_statistics(
        user=row.user, table=table, mode=str(staged["mode"]), figures=staged["figures"]
    )
    record("statistics_stored", {"table": quote_path(parts), "mode": staged["mode"]})
