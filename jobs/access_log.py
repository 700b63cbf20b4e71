"""Which user's job read or wrote which tables, and what it was refused: the access events of
the audit log (ADR 0011 §5), each in the transaction of what it records.

- ``record_reads``: one ``read`` (an EXPLAIN: ``explain``) event per distinct securable a
  job's plan reads (its
  ``Plan.access`` records with SELECT, EXECUTE or READ FILES), written by
  ``sessions.statements.start_job`` in the job's creation transaction; ``detail.via`` names the
  view (or SQL function) it was read through when it was read only that way.
- ``record_writes``: one ``write`` event per target, by ``tabledata.commit.commit`` in the commit's
  transaction (a stream: on its first committed batch only, ``tabledata.stream_commit``).
- ``record_denied``: a ``denied`` event for a statement refused ``PERMISSION_DENIED``, by
  ``sessions.statements.fail_job``, with the failed job.

They expire after ``TESSERA_AUDIT_ACCESS_RETENTION_SECONDS`` (``audit.services``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from audit import models as audit_models
from audit.services import record
from catalog.access import securable_key_at
from catalog.models import Table
from core.planner.plan import AccessPlan
from jobs.errors import JobError

# What a job reads (the privileges of its ``Plan.access`` records that are reads).
READS = frozenset({"SELECT", "EXECUTE", "READ FILES"})
PERMISSION_DENIED = "PERMISSION_DENIED"


def _records(access: Iterable[AccessPlan | Mapping[str, Any]]) -> list[AccessPlan]:
    return [a if isinstance(a, AccessPlan) else AccessPlan.from_dict(a) for a in access]


def record_reads(
    job: Any, access: Iterable[AccessPlan | Mapping[str, Any]], *, explain: bool = False
) -> int:
    """One ``read`` event per distinct securable the job reads (``explain`` when the job is an
    EXPLAIN: it plans over them and reads no row); returns how many."""
    first: dict[str, AccessPlan] = {}
    privileges: dict[str, list[str]] = {}
    via: dict[str, tuple[str, ...] | None] = {}
    for item in _records(access):
        if item.privilege not in READS:
            continue
        key = item.securable_key
        first.setdefault(key, item)
        held = privileges.setdefault(key, [])
        if item.privilege not in held:
            held.append(item.privilege)
        # Read directly once: a direct read (None); else the first view it was read through.
        via[key] = (
            None
            if item.via is None or (key in via and via[key] is None)
            else (via.get(key) or item.via)
        )
    for key, item in first.items():
        through = via.get(key)
        detail: dict[str, Any] = {"via": list(through)} if through else {}
        record(
            audit_models.EXPLAIN if explain else audit_models.READ,
            actor=job.user,
            object_kind=item.kind,
            path=item.identifier,
            securable_key=key,
            privileges=privileges[key],
            job_id=job.pk,
            detail=detail,
        )
    return len(first)


def record_writes(job: Any, tables: Sequence[Table], modes: Sequence[str] = ()) -> None:
    """One ``write`` event per target table of the job's commit; ``modes`` (per table, as
    ``Job.staging`` names them: ctas, insert, overwrite, upsert…) go into ``detail.mode``."""
    for index, table in enumerate(tables):
        d = table.database
        detail = {"mode": modes[index]} if index < len(modes) and modes[index] else {}
        record(
            audit_models.WRITE,
            actor=job.user,
            object_kind="view" if table.kind == Table.KIND_VIEW else "table",
            path=(d.catalog.name, d.name, table.name),
            securable_key=f"relation:{table.pk}",
            privileges=["MODIFY"],
            job_id=job.pk,
            detail=detail,
        )


def record_denied(job: Any, error: JobError | Mapping[str, Any]) -> bool:
    """A ``denied`` event for a job that failed ``PERMISSION_DENIED`` (the planner's refusal
    names the object, its kind and the missing privilege in ``details``); False for any
    other error. The securable is looked up by its path (one query), so that the object's
    page lists the refusal among its recent access. ``error``: the job's, or its JSON."""
    if isinstance(error, JobError):
        error = error.to_json()
    if not isinstance(error, Mapping) or error.get("code") != PERMISSION_DENIED:
        return False
    details = error.get("details") if isinstance(error.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    kind = str(details.get("kind") or "")
    privilege = str(details.get("privilege") or "")
    identifier = [str(part) for part in details.get("identifier") or []]
    path = identifier or ([str(details["path"])] if details.get("path") else [])
    detail: dict[str, Any] = {"message": str(error.get("message") or "")[:500]}
    if isinstance(details.get("via"), Mapping):
        detail["via"] = details["via"].get("identifier")
    record(
        audit_models.DENIED,
        actor=job.user,
        object_kind=kind[:10],
        path=path,
        securable_key=securable_key_at(kind, identifier, str(details.get("path") or "")),
        privileges=[privilege] if privilege else [],
        job_id=job.pk,
        detail=detail,
    )
    return True
