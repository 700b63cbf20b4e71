// The live tail of a streaming SELECT (docs/streaming.md): the job's result is the latest rows of the
// stream (at most 1,000, newest last, replaced after each micro-batch), read again with each
// batch and every few seconds while the job runs, and shown newest first in the result grid.
// Once the stream is stopped, the last tail stays readable.
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { ApiError, TERMINAL, enc, get, type Job, type ResultPage } from "../../api";
import { jobPath } from "../../data/jobs";
import { newestFirst, tailLine } from "../jobs/stream";
import { ResultGrid } from "./ResultGrid";
import { ValueViewer } from "./ValueViewer";
import { copyText } from "./clipboard";
import { PAGE_SIZE, cellText } from "./model";
import { formatRows, sortRows, togglePinned, withWidth, type SortSpec } from "./table";
import "./results.css";

/** How often the tail is read again while the stream runs, besides after each batch. */
export const TAIL_POLL_MS = 2000;

/** Not there yet: no micro-batch has produced rows (the server has no result to serve). */
const notReady = (error: unknown) =>
  error instanceof ApiError && (error.status === 404 || error.status === 409);

export function LiveTail({ job, height = 360 }: { job: Job; height?: number }) {
  const live = !TERMINAL.has(job.status);
  const batch = job.progress.stream?.batch_id ?? -1;
  const query = useQuery({
    queryKey: ["jobs", jobPath(job.id), "tail", live ? batch : `ended-${job.status}`],
    queryFn: ({ signal }) => get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=${PAGE_SIZE}&offset=0`, { signal }),
    placeholderData: (previous) => previous,
    refetchInterval: live ? TAIL_POLL_MS : false,
    retry: false,
  });
  const [sort, setSort] = useState<SortSpec | null>(null);
  const [pinned, setPinned] = useState<number[]>([]);
  const [widths, setWidths] = useState<Record<number, number>>({});
  const [viewing, setViewing] = useState<{ value: unknown; column: number; row: number } | null>(null);
  const [notice, setNotice] = useState("");

  const page = query.data ?? null;
  const columns = useMemo(() => page?.columns ?? [], [page]);
  const rows = useMemo(() => (page ? sortRows(newestFirst(page.rows), sort, columns) : null), [page, sort, columns]);
  const updated = job.progress.stream?.updated_at ?? (query.dataUpdatedAt || null);
  const waiting = !page && (query.isPending || notReady(query.error));
  const error = query.error && !notReady(query.error)
    ? query.error instanceof ApiError
      ? query.error.message
      : "The rows could not be loaded."
    : null;

  const copy = (text: string, what: string) =>
    copyText(text).then(
      () => setNotice(`Copied ${what}`),
      () => setNotice("The browser did not allow copying."),
    );

  return (
    <section className="result-view live-tail" style={{ height }} aria-label="Live rows" data-testid="live-tail">
      <div className="toolbar result-toolbar">
        <span className="result-count" data-testid="live-line" aria-live="polite">
          {page
            ? tailLine(live, page.rows.length, updated)
            : live
              ? "Live — waiting for the first micro-batch…"
              : "Stopped — the stream produced no rows"}
        </span>
        {page && <span className="muted small-text">newest first</span>}
        <span className="spacer" />
        <span className="muted result-notice" role="status">
          {notice}
        </span>
      </div>
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}
      <div className="result-main">
        {rows === null ? (
          waiting && <div className="result-empty muted">{live ? "Waiting for rows…" : "No rows."}</div>
        ) : rows.length === 0 ? (
          <div className="result-empty muted" data-testid="result-empty">
            No rows yet
          </div>
        ) : (
          <ResultGrid
            columns={columns}
            rows={rows}
            offset={0}
            total={rows.length}
            sort={sort}
            onSort={setSort}
            onFilter={() => setNotice("Filters apply to a finished result; stop the stream or run it in batch mode.")}
            pinned={pinned}
            onPin={(column) => setPinned((current) => togglePinned(current, column))}
            widths={widths}
            onResize={(column, width) => setWidths((current) => withWidth(current, column, width))}
            onCopyValue={(value) => void copy(cellText(value) ?? "", "the value")}
            onCopyBlock={(block) => void copy(formatRows(block.columns, block.rows, "tsv"), "the cells")}
            onView={(value, column, row) => setViewing({ value, column, row })}
            onSelection={noop}
          />
        )}
      </div>
      {viewing && (
        <ValueViewer
          name={columns[viewing.column]?.name ?? ""}
          dataType={columns[viewing.column]?.data_type ?? ""}
          rowNumber={viewing.row}
          value={viewing.value}
          onCopy={(text) => void copy(text, "the value")}
          onClose={() => setViewing(null)}
        />
      )}
    </section>
  );
}

function noop(): void {}
