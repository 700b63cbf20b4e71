"""Every step a job's transitions take besides the job's own row and event, in order: the
one list (FLIP-218's job-status hooks of Tessera, as named functions).

Who runs them: ``jobs.lifecycle.transition`` (and ``lifecycle.created`` for CREATED), the
one function that moves a job, whoever moves it — the worker's ``engine.run`` /
``engine.write_runner`` / ``engine.streaming`` / ``engine.monitor``, the web process's
``sessions.statements`` / ``sessions.commands`` / ``sessions.scripts``, the reaper
(``jobs.maintenance``). The steps live in the rooms above ``jobs`` (``tabledata``,
``sessions``, ``schedules``), so ``lifecycle`` does not import this module: ``install``
hands it the list, once per process, from ``JobsConfig.ready`` (``jobs/apps.py``).

Each step is ``step(job: JobView, record)`` and does nothing for a job it is not about (a
write step for a query, say).
"""

from __future__ import annotations

from core import jobstate
from jobs import lifecycle
from schedules.runs import run_ended
from sessions.scripts import start_next_statement
from tabledata.statistics_steps import store_statistics
from tabledata.write_steps import clean_up_write, commit_write, prepare_write

# Inside the transition's transaction, before its status event: a step that raises rolls
# the transition back and its error reaches the caller (a write whose commit fails is not
# FINISHED: its runner fails it, and then ``clean_up_write`` runs).
INSIDE = {
    jobstate.CREATED: (prepare_write,),  # a write's staging, a CTAS's stage table
    jobstate.FINISHED: (commit_write, store_statistics),  # the data, ANALYZE TABLE's figures
}

# After the transaction committed, in whichever process made the transition: a step that
# raises is logged and recorded (``hook_failed``) and the next one still runs.
AFTER = {
    jobstate.FINISHED: (start_next_statement, run_ended),  # run_ended: a scheduled run's
    jobstate.FAILED: (clean_up_write, start_next_statement, run_ended),  # end, its alerts
    jobstate.CANCELED: (clean_up_write, start_next_statement, run_ended),
}


def install() -> None:
    """Give every transition of this process its steps (``JobsConfig.ready``)."""
    lifecycle.install_steps(lifecycle.Steps(inside=INSIDE, after=AFTER))
