// The sections of a table or view page that ask the server: properties, the DDL (SHOW CREATE
// TABLE, run as a statement) and sample data (a query job, followed until it ends).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { TERMINAL } from "../../../api";
import { JobProgress, JobStatusBadge } from "../../../components/jobs/JobProgress";
import { ResultView } from "../../../components/results/ResultView";
import { useJob } from "../../../data/jobs";
import { Link, navigate, pathOf } from "../../../router";
import { openInEditor } from "../../../store";
import { ErrorAlert, KeyValues, useCatalogQuery } from "../common";
import { resultOf, runStatement, submit } from "../sql";
import { queryInEditor } from "./parts";

export function PropertiesPanel({ base }: { base: string }) {
  const props = useCatalogQuery<{ properties: Record<string, string> }>(`${base}/properties`);
  if (props.error) return <ErrorAlert error={props.error} />;
  if (!props.data) return <p className="muted">Loading properties…</p>;
  return <KeyValues values={props.data.properties} empty="No properties." />;
}

export function DdlPanel({ path }: { path: string }) {
  const client = useQueryClient();
  const ddl = useQuery({
    queryKey: ["statement", "ddl", path],
    queryFn: async ({ signal }) => {
      const { job, firstPage } = await runStatement(client, `SHOW CREATE TABLE ${path}`, 30, signal);
      if (job.status !== "FINISHED") throw new Error(job.error?.message ?? `The statement ended ${job.status}.`);
      const result = await resultOf(job, firstPage, signal);
      return result.rows.map((row) => String(row[0] ?? "")).join("\n");
    },
    // A statement is run once per mount (or "Run again"), never by a background refetch.
    staleTime: Infinity,
    retry: false,
    gcTime: 0,
  });
  const text = ddl.data ?? null;
  const error = ddl.error;
  if (error) return <ErrorAlert error={error} />;
  if (text === null) return <p className="muted">Running SHOW CREATE TABLE…</p>;
  return (
    <>
      <pre className="cat-ddl" data-testid="ddl">
        {text}
      </pre>
      <div className="toolbar">
        <button
          type="button"
          className="small"
          onClick={() => {
            openInEditor({ sql: text, title: "DDL" });
            navigate("/editor");
          }}
        >
          Open in editor
        </button>
      </div>
    </>
  );
}

export function SamplePanel({ path, title }: { path: string; title: string }) {
  const client = useQueryClient();
  // Submitting is a query of its own (one per "Run again"); the job is then followed.
  const submitted = useQuery({
    queryKey: ["statement", "sample", path],
    queryFn: ({ signal }) => submit(client, `SELECT * FROM ${path} LIMIT 100`, 5, signal),
    // A statement is run once per mount (or "Run again"), never by a background refetch.
    staleTime: Infinity,
    retry: false,
    gcTime: 0,
  });
  // A job that ended within the wait needs no following (its first page came with it).
  const started = submitted.data;
  const followed = useJob(started && !TERMINAL.has(started.status) ? started.id : null);
  const job = submitted.isFetching ? null : (followed.job ?? submitted.data ?? null);
  const error = submitted.error ?? followed.error;
  const { refetch } = submitted;
  return (
    <div className="cat-sample" data-testid="sample">
      <div className="toolbar">
        <button type="button" className="small" onClick={() => queryInEditor(path, title)}>
          Query in editor
        </button>
        <button
          type="button"
          className="small"
          onClick={() => void refetch()}
          disabled={!error && (!job || job.status === "CREATED" || job.status === "RUNNING")}
        >
          Run again
        </button>
        {job ? <JobStatusBadge status={job.status} /> : null}
        {job ? (
          <Link to={pathOf("jobs", job.id)} className="muted">
            job {job.id.slice(0, 8)}
          </Link>
        ) : null}
      </div>
      <ErrorAlert error={error} />
      {!job && !error ? (
        <p className="muted cat-spinner" role="status">
          Starting the sample query…
        </p>
      ) : null}
      {job && (job.status === "CREATED" || job.status === "RUNNING") ? (
        <div role="status" className="cat-spinner">
          <span className="muted">Reading the first 100 rows…</span> <JobProgress job={job} />
        </div>
      ) : null}
      {job && (job.status === "FAILED" || job.status === "CANCELED") ? (
        <div className="alert" role="alert">
          {job.error?.message ?? `The query ended ${job.status}.`}
        </div>
      ) : null}
      {job && job.status === "FINISHED" ? (
        <div className="cat-result">
          {/* The grid's own header says how many rows there are (once). */}
          <ResultView job={job} height={380} downloadName={`${title} sample`} />
        </div>
      ) : null}
    </div>
  );
}

