// A CANCELED job's reason (who canceled it and when, or the statement that stopped a script):
// an outcome someone asked for, shown as a note in the run's status colours, not as an error.
import type { Job } from "../../api";

export function CanceledNote({ job }: { job: Job }) {
  return (
    <p className="notice canceled" role="status" data-testid="job-canceled">
      <strong>Canceled</strong>
      {job.error?.message ? ` — ${job.error.message}` : ""}
    </p>
  );
}
