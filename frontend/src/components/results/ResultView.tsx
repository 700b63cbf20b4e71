// The result of a finished job: a virtualised grid over pages of 1,000 rows (column types in
// the header, NULL distinct from ''), downloads, copying, and a chart of the current page.
// A click selects a cell; the arrow keys move the selection and Ctrl/Cmd-C copies its value.
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
} from "react";
import { useQuery } from "@tanstack/react-query";
import { API, ApiError, enc, get, qs, type Job, type ResultColumn, type ResultPage } from "../../api";
import { jobPath } from "../../data/jobs";
import { ResultChart } from "./ResultChart";
import { copyText } from "./clipboard";
import {
  PAGE_SIZE,
  ROW_HEIGHT,
  cellText,
  columnWidths,
  isNumericType,
  pageRange,
  scrollToShow,
  toTsv,
  truncate,
  visibleWindow,
} from "./model";
import "./results.css";

export interface ResultViewProps {
  /** A job; shows its result when FINISHED with a result, nothing otherwise. */
  job: Job;
  /** Pixel height available to the grid (it scrolls inside). Default: fill the parent. */
  height?: number;
}

export function ResultView({ job, height }: ResultViewProps) {
  if (job.status !== "FINISHED" || !job.result) return null;
  // A new job starts over (page 1, its own tokens).
  return <ResultBody key={job.id} job={job} result={job.result} height={height} />;
}

type Result = NonNullable<Job["result"]>;

interface LoadedPage {
  index: number;
  columns: ResultColumn[];
  rows: unknown[][];
  next: string | null;
}

function ResultBody({ job, result, height }: { job: Job; result: Result; height?: number }) {
  const [view, setView] = useState<"table" | "chart">("table");
  const [pageIndex, setPageIndex] = useState(0);
  const [notice, setNotice] = useState("");
  // Page tokens are forward-only: tokens[i] fetches page i; we keep every one we saw.
  const tokens = useRef<(string | null)[]>([null]);
  const query = useQuery({
    queryKey: ["jobs", jobPath(job.id), "result", pageIndex],
    queryFn: async ({ signal }): Promise<LoadedPage> => {
      const token = tokens.current[pageIndex] ?? null;
      const body = await get<ResultPage>(
        `/jobs/${enc(job.id)}/result${qs({ page_size: PAGE_SIZE, page_token: token })}`,
        { signal },
      );
      tokens.current[pageIndex + 1] = body.next_page_token;
      return { index: pageIndex, columns: body.columns, rows: body.rows, next: body.next_page_token };
    },
    // The page shown stays until the next one is there.
    placeholderData: (previous) => previous,
    staleTime: Infinity,
  });
  const page = query.data ?? null;
  const loading = query.isFetching;
  const error = query.error
    ? query.error instanceof ApiError
      ? query.error.message
      : "The result could not be loaded."
    : null;

  // A page that names no columns shows the job's own.
  const columns = page?.columns.length ? page.columns : result.columns;
  const rows = page && page.index === pageIndex ? page.rows : null;
  const range = pageRange(pageIndex, rows?.length ?? 0);
  const hasNext = !!page && page.index === pageIndex && page.next !== null;
  const total = result.row_count;
  const base = `${API}/jobs/${enc(job.id)}/result`;

  const announce = useCallback((text: string) => {
    setNotice(text);
    window.setTimeout(() => setNotice((current) => (current === text ? "" : current)), 2500);
  }, []);
  const copy = useCallback(
    (text: string, what: string) => {
      copyText(text).then(
        () => announce(`Copied ${what}`),
        () => announce("The browser did not allow copying."),
      );
    },
    [announce],
  );

  return (
    <section
      className="result-view"
      style={height ? { height: fittedHeight(height, result.row_count, view) } : undefined}
      aria-label="Result"
      data-testid="result-view"
    >
      <div className="toolbar result-toolbar">
        <span className="result-count" data-testid="result-count">
          {total.toLocaleString("en-US")} {total === 1 ? "row" : "rows"}
        </span>
        {result.truncated && (
          <span className="badge warn" title="The server kept only the first rows of the result.">
            truncated: only the first {total.toLocaleString("en-US")} rows were kept
          </span>
        )}
        <span className="spacer" />
        <span className="muted result-notice" role="status" data-testid="result-notice">
          {notice}
        </span>
        <button
          type="button"
          className="small"
          disabled={!rows || rows.length === 0}
          title="Copy the rows on this page, with the column names, as tab-separated text"
          onClick={() =>
            rows && copy(toTsv(columns, rows), `${rows.length.toLocaleString("en-US")} ${rows.length === 1 ? "row" : "rows"}`)
          }
        >
          Copy page
        </button>
        <span className="muted">Download</span>
        <a className="button small" href={`${base}.csv`} download>
          CSV
        </a>
        <a className="button small" href={`${base}.json`} download>
          JSON
        </a>
        <a className="button small" href={`${base}.parquet`} download>
          Parquet
        </a>
        <div className="segmented" role="group" aria-label="Result view">
          <button
            type="button"
            className="small"
            aria-pressed={view === "table"}
            onClick={() => setView("table")}
          >
            Table
          </button>
          <button
            type="button"
            className="small"
            aria-pressed={view === "chart"}
            onClick={() => setView("chart")}
          >
            Chart
          </button>
        </div>
      </div>

      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}

      <div className="result-main">
        {rows === null ? (
          !error && <div className="result-empty muted">Loading rows…</div>
        ) : rows.length === 0 && pageIndex === 0 ? (
          <div className="result-empty muted" data-testid="result-empty">
            No rows
          </div>
        ) : view === "table" ? (
          <ResultGrid
            columns={columns}
            rows={rows}
            offset={pageIndex * PAGE_SIZE}
            total={total}
            onCopy={(value) => copy(cellText(value) ?? "", "the value")}
          />
        ) : (
          <ResultChart
            columns={columns}
            rows={rows}
            note={`Chart of the rows on this page (rows ${range.first.toLocaleString("en-US")}–${range.last.toLocaleString("en-US")}).`}
          />
        )}
      </div>

      {(pageIndex > 0 || hasNext) && (
        <nav className="toolbar result-pager" aria-label="Result pages">
          <button
            type="button"
            className="small"
            disabled={pageIndex === 0 || loading}
            onClick={() => setPageIndex((i) => Math.max(0, i - 1))}
          >
            Previous page
          </button>
          <span data-testid="result-range" aria-live="polite">
            {loading
              ? "Loading…"
              : `rows ${range.first.toLocaleString("en-US")}–${range.last.toLocaleString("en-US")} of ${total.toLocaleString("en-US")}`}
          </span>
          <button
            type="button"
            className="small"
            disabled={!hasNext || loading}
            onClick={() => setPageIndex((i) => i + 1)}
          >
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}

const HEADER_HEIGHT = 40;
const ROWNUM_WIDTH = 64;

/** Only the rows in view are in the DOM: a fixed row height, an absolutely positioned window
 * of rows inside a spacer as tall as the whole page. */
function ResultGrid({
  columns,
  rows,
  offset,
  total,
  onCopy,
}: {
  columns: ResultColumn[];
  rows: unknown[][];
  offset: number;
  total: number;
  onCopy: (value: unknown) => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  // The selected cell (row on this page, column), or none.
  const [selected, setSelected] = useState<{ row: number; col: number } | null>(null);
  const [viewport, setViewport] = useState(600);
  const frame = useRef<number | null>(null);

  const widths = useMemo(() => columnWidths(columns, rows), [columns, rows]);
  const numeric = useMemo(() => columns.map((c) => isNumericType(c.data_type)), [columns]);
  const fullWidth = ROWNUM_WIDTH + widths.reduce((sum, w) => sum + w, 0);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    setViewport(element.clientHeight);
    const observer = new ResizeObserver(() => setViewport(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // A new page starts at its top, with nothing selected.
  const [rowsShown, setRowsShown] = useState(rows);
  if (rowsShown !== rows) {
    setRowsShown(rows);
    setScrollTop(0);
    setSelected(null);
  }
  useLayoutEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0;
  }, [rows]);

  const select = (event: MouseEvent<HTMLDivElement>) => {
    const cell = (event.target as HTMLElement).closest<HTMLElement>("[data-col]");
    const row = cell?.parentElement?.dataset.row;
    if (!cell || row === undefined) return;
    setSelected({ row: Number(row), col: Number(cell.dataset.col) });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!selected) return;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "c") {
      if (window.getSelection()?.toString()) return; // the user selected text: copy that
      event.preventDefault();
      onCopy(rows[selected.row]?.[selected.col]);
      return;
    }
    const moves: Record<string, [number, number]> = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
    };
    const move = moves[event.key];
    if (event.key === "Escape") {
      setSelected(null);
      return;
    }
    if (!move) return;
    event.preventDefault();
    const row = Math.max(0, Math.min(rows.length - 1, selected.row + move[0]));
    const col = Math.max(0, Math.min(columns.length - 1, selected.col + move[1]));
    setSelected({ row, col });
    const element = scroller.current;
    if (element) {
      const top = scrollToShow(row, element.scrollTop, element.clientHeight, HEADER_HEIGHT);
      if (top !== element.scrollTop) element.scrollTop = top;
    }
  };

  useEffect(
    () => () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    },
    [],
  );

  const onScroll = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      if (scroller.current) setScrollTop(scroller.current.scrollTop);
    });
  }, []);

  const { start, end } = visibleWindow(scrollTop, viewport, rows.length);
  const visible = rows.slice(start, end);

  return (
    <div
      ref={scroller}
      className="rv-scroll"
      onScroll={onScroll}
      onMouseDown={select}
      onKeyDown={onKeyDown}
      tabIndex={0}
      role="grid"
      aria-label="Result rows"
      aria-rowcount={total + 1}
      aria-colcount={columns.length + 1}
      data-testid="result-grid"
    >
      <div className="rv-inner" style={{ width: fullWidth }}>
        <div className="rv-header" role="row" aria-rowindex={1} style={{ height: HEADER_HEIGHT }}>
          <div className="rv-cell rv-rownum" role="columnheader" style={{ width: ROWNUM_WIDTH }}>
            #
          </div>
          {columns.map((column, index) => (
            <div
              key={index}
              className={`rv-cell rv-head${numeric[index] ? " num" : ""}`}
              role="columnheader"
              style={{ width: widths[index] }}
              title={`${column.name} ${column.data_type}`}
            >
              <span className="rv-colname">{column.name}</span>
              <span className="rv-coltype">{column.data_type}</span>
            </div>
          ))}
        </div>
        <div className="rv-body" style={{ height: rows.length * ROW_HEIGHT }} role="rowgroup">
          <div className="rv-window" style={{ top: start * ROW_HEIGHT }}>
            {visible.map((row, i) => {
              const number = offset + start + i + 1;
              return (
                <div
                  key={start + i}
                  className="rv-row"
                  role="row"
                  aria-rowindex={number + 1}
                  data-row={start + i}
                  style={{ height: ROW_HEIGHT }}
                >
                  <div className="rv-cell rv-rownum" role="rowheader" style={{ width: ROWNUM_WIDTH }}>
                    {number}
                  </div>
                  {columns.map((_, c) => (
                    <Cell
                      key={c}
                      col={c}
                      value={row[c]}
                      width={widths[c]}
                      numeric={numeric[c]}
                      selected={selected?.row === start + i && selected.col === c}
                    />
                  ))}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </div>
  );
}

function Cell({
  col,
  value,
  width,
  numeric,
  selected,
}: {
  col: number;
  value: unknown;
  width: number;
  numeric: boolean;
  selected: boolean;
}) {
  const text = cellText(value);
  const mark = selected ? " selected" : "";
  if (text === null)
    return (
      <div className={`rv-cell${mark}`} role="gridcell" aria-selected={selected} data-col={col} style={{ width }}>
        <span className="null">NULL</span>
      </div>
    );
  const { shown, cut } = truncate(text);
  return (
    <div
      className={`rv-cell${numeric ? " num" : ""}${mark}`}
      role="gridcell"
      aria-selected={selected}
      data-col={col}
      style={{ width }}
      title={cut || text.length > 8 ? text : undefined}
    >
      {shown}
    </div>
  );
}

/** A given height, shrunk to what a short table needs (a chart keeps the whole height). */
function fittedHeight(height: number, rowCount: number, view: "table" | "chart"): number {
  if (view === "chart") return height;
  // toolbar + gaps + header + rows + horizontal scrollbar + pager
  const needed = 40 + HEADER_HEIGHT + Math.min(rowCount, PAGE_SIZE) * ROW_HEIGHT + 18 + 40;
  return Math.max(220, Math.min(height, needed));
}
