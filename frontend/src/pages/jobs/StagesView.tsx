// The "Stages" section of the job page: the per-stage Spark metrics the worker recorded when the
// job's Spark work ended (progress.stages), and the "Spark stages" link of the job's summary.
import { useQuery } from "@tanstack/react-query";
import { get, type Job, type JobStage } from "../../api";
import { DataGrid } from "../../components/grid/DataGrid";
import { jobPath } from "../../data/jobs";
import { formatBytes, formatCount } from "../../format";
import { formatStageDuration, stageLabel, stagePurpose, stagesSummary } from "./stages";

export const STAGES_ID = "job-stages";
/** The worker records at most this many stages (jobs.executor.stage_metrics.MAX_STAGES). */
const MAX_STAGES = 100;
/** A column of figures: header and cells right-aligned. */
const NUM = { className: "num", headerClassName: "num" } as const;
/** An ended job gets its stages a moment after its end (a stopped one once its tasks settled):
 * asked again this often, for this long, as the page stops following ended jobs. */
const SETTLE_POLL_MS = 1000;
const SETTLE_MS = 8000;

/** The recorded stages of an ended job (null: not ended yet): its own, or those recorded just
 * after it ended; null when none were (Spark Connect, no Spark work), undefined while waiting. */
export function useJobStages(job: Job | null): JobStage[] | null | undefined {
  const own = job?.progress.stages;
  const waiting = !!job && (own === null || own === undefined) && job.progress.stages_total > 0;
  const path = jobPath(job?.id ?? "");
  const later = useQuery({
    queryKey: ["jobs", path, "stages"],
    queryFn: ({ signal }) => get<Job>(path, { signal }),
    enabled: waiting,
    refetchInterval: (query) =>
      query.state.data?.progress.stages || settled(query.state.dataUpdatedAt) ? false : SETTLE_POLL_MS,
  });
  if (!waiting) return own ?? null;
  const found = later.data?.progress.stages;
  if (found) return found;
  return settled(later.dataUpdatedAt) || later.isError ? null : undefined;

  // Long enough after the job ended for its stages to have been recorded, if they ever are.
  function settled(readAt: number): boolean {
    const ended = Date.parse(job?.finished_at ?? "");
    return readAt > 0 && (Number.isNaN(ended) || readAt - ended > SETTLE_MS);
  }
}

/** Whether the job page has a Stages section for this job (it ended, and ran Spark work). */
export function hasStagesSection(job: Job): boolean {
  const stages = job.progress.stages;
  return (stages !== null && stages !== undefined) || job.progress.stages_total > 0;
}

function openStages() {
  const section = document.getElementById(STAGES_ID);
  if (!section) return;
  section.scrollIntoView({ behavior: "smooth", block: "start" });
  section.focus({ preventScroll: true });
}

/** The summary's entry: a link that scrolls to the Stages section. */
export function StagesLink({ stages }: { stages: JobStage[] | null | undefined }) {
  return (
    <button type="button" className="link stages-link" onClick={openStages}>
      {stages ? `Spark stages: ${stagesSummary(stages)}` : "Spark stages"}
    </button>
  );
}

function Bytes({ value }: { value: number }) {
  return <span title={`${formatCount(value)} bytes`}>{formatBytes(value)}</span>;
}

function Spill({ stage }: { stage: JobStage }) {
  const spilled = stage.memory_spilled + stage.disk_spilled > 0;
  if (!spilled) return <span className="muted">0 B</span>;
  return (
    <span
      className="spill"
      data-testid="stage-spill"
      title={`Spilled: ${formatCount(stage.memory_spilled)} bytes as in memory, ${formatCount(stage.disk_spilled)} bytes on disk`}
    >
      {formatBytes(stage.memory_spilled)} / {formatBytes(stage.disk_spilled)}
    </span>
  );
}

export function StagesView({ stages, total }: { stages: JobStage[] | null | undefined; total: number }) {
  const listed = new Set((stages ?? []).map((stage) => stage.stage_id)).size;
  const skipped = stages && stages.length < MAX_STAGES ? total - listed : 0;
  return (
    <section id={STAGES_ID} tabIndex={-1} aria-labelledby="job-stages-heading" className="job-stages">
      <h2 id="job-stages-heading">Stages</h2>
      {stages === undefined ? (
        <p className="muted">Reading the stages that ran…</p>
      ) : stages === null ? (
        <p className="muted" data-testid="job-stages-unavailable">
          Stage metrics are not available for this job: they are recorded when a job's Spark work
          ends, on the classic Spark runtime only (not on Spark Connect, whose server keeps them).
        </p>
      ) : stages.length === 0 ? (
        <p className="muted">Spark ran no stage for this job.</p>
      ) : (
        <div className="stages-scroll">
          <DataGrid
            rows={stages}
            className="stages-table"
            testId="job-stages"
            rowKey={(stage) => `${stage.stage_id}-${stage.attempt}`}
            rowAttributes={(stage) => ({ "data-stage-id": String(stage.stage_id) })}
            columns={[
              { header: "Stage", className: "num", cell: (stage) => stageLabel(stage) },
              {
                header: "What it does",
                className: "stage-name",
                title: (stage) => stage.failure ?? `Spark's name: ${stage.name}`,
                cell: (stage) => (
                  <>
                    {stagePurpose(stage)}
                    <span className="muted stage-spark-name"> · {stage.name}</span>
                    {stage.failure && <div className="stage-failure">{stage.failure}</div>}
                  </>
                ),
              },
              { header: "Status", cell: (stage) => stage.status },
              {
                header: "Tasks",
                ...NUM,
                cell: (stage) => (
                  <>
                    {stage.tasks_completed}/{stage.tasks}
                    {stage.tasks_failed > 0 && <span className="stage-failed"> ({stage.tasks_failed} failed)</span>}
                  </>
                ),
              },
              { header: "Rows read", ...NUM, cell: (stage) => formatCount(stage.rows_read) },
              { header: "Bytes read", ...NUM, cell: (stage) => <Bytes value={stage.bytes_read} /> },
              { header: "Rows written", ...NUM, cell: (stage) => formatCount(stage.rows_written) },
              { header: "Bytes written", ...NUM, cell: (stage) => <Bytes value={stage.bytes_written} /> },
              { header: "Shuffle read", ...NUM, cell: (stage) => <Bytes value={stage.shuffle_read_bytes} /> },
              { header: "Shuffle write", ...NUM, cell: (stage) => <Bytes value={stage.shuffle_write_bytes} /> },
              { header: "Spill", ...NUM, headerTitle: "Memory / disk", cell: (stage) => <Spill stage={stage} /> },
              {
                header: "Duration",
                ...NUM,
                title: (stage) => `Executor run time ${formatStageDuration(stage.run_time_ms)}`,
                cell: (stage) => formatStageDuration(stage.duration_ms),
              },
            ]}
          />
          {skipped > 0 && (
            <p className="muted" data-testid="job-stages-skipped">
              {skipped === 1 ? "1 stage was" : `${skipped} stages were`} skipped (Spark reused its shuffle
              output) and {skipped === 1 ? "is" : "are"} not listed.
            </p>
          )}
        </div>
      )}
    </section>
  );
}
