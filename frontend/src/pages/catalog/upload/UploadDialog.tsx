// Upload a CSV or Parquet file into a database: the file is sent to the catalog pages' session
// in that database (progress bar), read there through a temporary table, its columns are shown
// editable (name, Spark type) and checked by Spark with a preview of 20 rows cast to the chosen
// types, then kept by CREATE TABLE … AS or appended by INSERT … BY NAME. Every statement goes
// through the statements endpoint, so the planner, its guards and the user's grants apply.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError, del, enc, type Job, type Upload } from "../../../api";
import { DataGrid } from "../../../components/grid/DataGrid";
import { ErrorAlert } from "../../../components/ErrorAlert";
import { invalidate } from "../../../data/queries";
import type { SessionSource } from "../../../data/statements";
import { countOf } from "../../../format";
import { Link, pathOf } from "../../../router";
import { resultOf, runStatement, sessionIn } from "../sql";
import { sendFile } from "./sendFile";
import {
  appendSql,
  columnsProblem,
  createSql,
  createTemporarySql,
  previewSql,
  tableNameOf,
  type UploadColumn,
} from "./uploadSql";

/** Seconds a statement's answer is waited for before its job is followed. */
const STATEMENT_WAIT_SECONDS = 10;

const fixedSession = (id: string): SessionSource => ({ current: () => Promise.resolve(id), forget() {} });

/** Run `sql` to its end in `session`; a job that did not finish is thrown as its error. */
async function run(client: ReturnType<typeof useQueryClient>, session: string, sql: string) {
  const answer = await runStatement(client, sql, STATEMENT_WAIT_SECONDS, new AbortController().signal, fixedSession(session));
  const { job } = answer;
  if (job.status !== "FINISHED") {
    throw new ApiError(400, {
      code: job.error?.code ?? job.status,
      message: job.error?.message ?? `The statement ended ${job.status}.`,
      details: (job.error?.details as Record<string, unknown> | undefined) ?? {},
    });
  }
  return answer;
}

/** A column's type as a CAST takes it (an upload's `… NOT NULL` is not part of the type). */
const castable = (type: string): string => type.replace(/\s+NOT NULL$/i, "");

type Target = { kind: "create"; name: string } | { kind: "append"; name: string };

export function UploadDialog({
  catalog,
  database,
  file,
  tables,
  onClose,
}: {
  catalog: string;
  database: string;
  file: File;
  /** The database's tables, to append to. */
  tables: string[];
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const client = useQueryClient();
  const [progress, setProgress] = useState(0);
  const [columns, setColumns] = useState<UploadColumn[] | null>(null);
  const [asked, setAsked] = useState<string | null>(null);
  const [target, setTarget] = useState<Target>({ kind: "create", name: tableNameOf(file.name) });

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);

  // 1. The file, sent once, to the catalog pages' session in this database (its temporary
  // table is named there).
  const send = useMutation({
    mutationFn: async (): Promise<{ session: string; upload: Upload }> => {
      const session = await sessionIn(catalog, database).current();
      return { session, upload: await sendFile(session, file, setProgress) };
    },
    onSuccess: ({ upload }) => {
      const inferred = upload.columns.map((c) => ({ source: c.name, name: c.name, type: castable(c.data_type) }));
      setColumns(inferred);
      // The inferred types are previewed at once (once the temporary table exists).
      if (!columnsProblem(inferred)) setAsked(previewSql(upload.id, inferred));
    },
  });
  const sendOnce = useRef(false);
  useEffect(() => {
    if (!sendOnce.current) {
      sendOnce.current = true;
      send.mutate();
    }
  }, [send]);
  const sent = send.data;

  // 2. The session's temporary table over the upload.
  const temporary = useQuery({
    queryKey: ["uploads", sent?.upload.id, "table"],
    queryFn: () => run(client, sent!.session, createTemporarySql(sent!.upload.id)),
    enabled: Boolean(sent),
    staleTime: Infinity,
    retry: false,
  });

  // 3. The preview: the casts run by Spark (a wrong type is Spark's error, shown here).
  const problem = columns ? columnsProblem(columns) : null;
  const wanted = sent && columns && !problem ? previewSql(sent.upload.id, columns) : null;
  const preview = useQuery({
    queryKey: ["uploads", sent?.upload.id, "preview", asked],
    queryFn: async ({ signal }) => {
      const { job, firstPage } = await run(client, sent!.session, asked!);
      return resultOf(job, firstPage, signal);
    },
    enabled: Boolean(sent && asked && temporary.isSuccess),
    staleTime: Infinity,
    retry: false,
  });
  const checked = preview.isSuccess && asked === wanted;

  // 4. Keep the rows: a new table, or appended to one.
  const keep = useMutation({
    mutationFn: async (): Promise<Job> => {
      const path = [catalog, database, target.name.trim()];
      const sql =
        target.kind === "create"
          ? createSql(path, sent!.upload.id, columns!)
          : appendSql(path, sent!.upload.id, columns!);
      const { job } = await run(client, sent!.session, sql);
      await invalidate(client, "catalogs");
      return job;
    },
  });

  const close = () => {
    // The upload is no longer needed (the session's end would remove it too).
    if (sent) void del(`/sessions/${enc(sent.session)}/uploads/${enc(sent.upload.id)}`).catch(() => undefined);
    onClose();
  };
  const busy = keep.isPending;
  const edit = (index: number, change: Partial<UploadColumn>) =>
    setColumns((old) => old && old.map((c, i) => (i === index ? { ...c, ...change } : c)));
  const rows = useMemo(() => preview.data?.rows ?? [], [preview.data]);

  return (
    <dialog
      ref={ref}
      className="cat-dialog upload-dialog"
      aria-labelledby={titleId}
      data-testid="upload-dialog"
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) close();
      }}
    >
      <h2 id={titleId}>
        Upload {file.name} into {catalog}.{database}
      </h2>
      {!sent ? (
        <div className="upload-progress">
          <label>
            {send.isError ? "Not sent" : `Sending ${countOf(file.size, "byte")}…`}
            <progress data-testid="upload-progress" max={1} value={progress} />
          </label>
          <ErrorAlert error={send.error} />
        </div>
      ) : (
        <p className="muted" data-testid="upload-summary">
          {countOf(sent.upload.rows, "row")}, {countOf(sent.upload.columns.length, "column")} read.
        </p>
      )}
      <ErrorAlert error={temporary.error} />
      {columns && !keep.isSuccess ? (
        <>
          <h3>Columns</h3>
          <table className="upload-columns" data-testid="upload-columns">
            <thead>
              <tr>
                <th>From the file</th>
                <th>Name</th>
                <th>Spark type</th>
              </tr>
            </thead>
            <tbody>
              {columns.map((column, index) => (
                <tr key={column.source} data-testid={`upload-column-${column.source}`}>
                  <td className="mono">{column.source}</td>
                  <td>
                    <input
                      aria-label={`Name of column ${column.source}`}
                      value={column.name}
                      onChange={(event) => edit(index, { name: event.target.value })}
                      spellCheck={false}
                      disabled={busy}
                    />
                  </td>
                  <td>
                    <input
                      aria-label={`Type of column ${column.source}`}
                      className="mono"
                      value={column.type}
                      onChange={(event) => edit(index, { type: event.target.value })}
                      spellCheck={false}
                      disabled={busy}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {problem ? <div className="alert" role="alert">{problem}</div> : null}
          <div className="toolbar">
            <button
              type="button"
              onClick={() => wanted && (wanted === asked ? void preview.refetch() : setAsked(wanted))}
              disabled={!wanted || !temporary.isSuccess || preview.isFetching || busy}
            >
              {preview.isFetching ? "Checking…" : "Check types and preview"}
            </button>
            {checked ? <span className="muted">Types checked by Spark.</span> : null}
            {!checked && preview.isSuccess && wanted !== asked ? (
              <span className="muted">Changed since the preview: check again.</span>
            ) : null}
          </div>
          <div data-testid="upload-preview-error">
            <ErrorAlert error={preview.error} />
          </div>
          <h3>Preview</h3>
          {preview.data ? (
            <DataGrid
              rows={rows}
              testId="upload-preview"
              className="upload-preview"
              rowKey={(_, index) => String(index)}
              columns={preview.data.columns.map((column, index) => ({
                header: column.name,
                headerTitle: column.data_type,
                className: "mono",
                cell: (row: unknown[]) => (row[index] === null ? <span className="muted">NULL</span> : String(row[index])),
              }))}
            />
          ) : (
            <p className="muted">{preview.isFetching ? "Running the preview…" : "No preview yet."}</p>
          )}
          <h3>Into</h3>
          <div className="cat-radios" role="radiogroup" aria-label="Target">
            <label>
              <input
                type="radio"
                name="upload-target"
                checked={target.kind === "create"}
                onChange={() => setTarget({ kind: "create", name: tableNameOf(file.name) })}
                disabled={busy}
              />{" "}
              Create new table
            </label>
            <label>
              <input
                type="radio"
                name="upload-target"
                checked={target.kind === "append"}
                onChange={() => setTarget({ kind: "append", name: tables[0] ?? "" })}
                disabled={busy || tables.length === 0}
              />{" "}
              Append to existing table
            </label>
          </div>
          {target.kind === "create" ? (
            <label>
              New table name
              <input
                value={target.name}
                onChange={(event) => setTarget({ kind: "create", name: event.target.value })}
                spellCheck={false}
                disabled={busy}
              />
            </label>
          ) : (
            <label>
              Table to append to
              <select
                value={target.name}
                onChange={(event) => setTarget({ kind: "append", name: event.target.value })}
                disabled={busy}
              >
                {tables.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
              <span className="muted">Columns are matched to the table's by name.</span>
            </label>
          )}
          <ErrorAlert error={keep.error} />
        </>
      ) : null}
      {keep.isSuccess ? (
        <div className="upload-outcome" data-testid="upload-outcome" role="status">
          {target.kind === "create" ? "Created " : `Appended ${countOf(sent?.upload.rows ?? 0, "row")} to `}
          <Link to={pathOf("catalog", catalog, database, "table", target.name.trim())} onClick={close}>
            {catalog}.{database}.{target.name.trim()}
          </Link>{" "}
          (<Link to={pathOf("jobs", keep.data.id)} onClick={close}>job {keep.data.id.slice(0, 8)}</Link>, {keep.data.status}).
        </div>
      ) : null}
      <div className="toolbar cat-dialog-actions">
        {!keep.isSuccess ? (
          <button
            type="button"
            className="primary"
            onClick={() => keep.mutate()}
            disabled={!checked || busy || !target.name.trim()}
            title={checked ? undefined : "Check the types first"}
          >
            {busy ? "Working…" : target.kind === "create" ? "Create table" : "Append rows"}
          </button>
        ) : null}
        <button type="button" onClick={close} disabled={busy}>
          {keep.isSuccess ? "Close" : "Cancel"}
        </button>
      </div>
    </dialog>
  );
}
