// The result of a finished job: a virtualised grid over pages of 1,000 rows (column types in
// the header, NULL distinct from ''), sort and filter — over the whole stored result by the
// server, or on the page shown — first/last page, copying as TSV/CSV/Markdown, downloads, a
// value viewer, and a chart over the whole result whose config a saved query keeps.
import { useCallback, useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { API, ApiError, enc, get, patch, type Job, type ResultPage, type SavedQuery } from "../../api";
import { countOf, formatCount } from "../../format";
import { FilterBar } from "./FilterBar";
import { HEADER_HEIGHT, ResultGrid } from "./ResultGrid";
import { ResultChart } from "./ResultChart";
import { ValueViewer } from "./ValueViewer";
import { fittingChart, type ChartConfig } from "./chartModel";
import { copyText } from "./clipboard";
import { pageIdentity, resultPageKey, type LoadedPage } from "./resultCache";
import { PAGE_SIZE, ROW_HEIGHT, cellText, pageRange } from "./model";
import {
  downloadQuery,
  filterParam,
  filterRows,
  formatRows,
  sortParam,
  sortRows,
  togglePinned,
  withWidth,
  type CopyFormat,
  type FilterSpec,
  type SortSpec,
} from "./table";
import "./results.css";

export interface ResultViewProps {
  /** A job; shows its result when FINISHED with a result, nothing otherwise. */
  job: Job;
  /** Pixel height available to the grid (it scrolls inside). Default: fill the parent. */
  height?: number;
  /** The saved query the job ran for: its chart config is shown and can be saved back. */
  savedQueryId?: string | null;
  /** What downloads are named after (the tab's or query's title); `job-<id>` without one. */
  downloadName?: string;
}

export function ResultView({ job, height, savedQueryId, downloadName }: ResultViewProps) {
  if (job.status !== "FINISHED" || !job.result) return null;
  // A new job starts over (page 1, no sort, no filter).
  return (
    <ResultBody
      key={job.id}
      job={job}
      result={job.result}
      height={height}
      savedQueryId={savedQueryId ?? null}
      downloadName={downloadName ?? ""}
    />
  );
}

type Result = NonNullable<Job["result"]>;
type Block = { columns: { name: string }[]; rows: unknown[][] };

const plural = countOf;

function ResultBody({
  job,
  result,
  height,
  savedQueryId,
  downloadName,
}: {
  job: Job;
  result: Result;
  height?: number;
  savedQueryId: string | null;
  downloadName: string;
}) {
  const total = result.row_count;
  const multiPage = total > PAGE_SIZE;
  const [view, setView] = useState<"table" | "chart" | null>(null);
  const [scope, setScope] = useState<"all" | "page">("all");
  const [sort, setSort] = useState<SortSpec | null>(null);
  const [filters, setFilters] = useState<FilterSpec[]>([]);
  const [editingFilter, setEditingFilter] = useState<number | null>(null);
  const [pageIndex, setPageIndex] = useState(0);
  const [notice, setNotice] = useState("");
  const [format, setFormat] = useState<CopyFormat>("tsv");
  const [pinned, setPinned] = useState<number[]>([]);
  const [widths, setWidths] = useState<Record<number, number>>({});
  const [selection, setSelection] = useState<Block | null>(null);
  const [viewing, setViewing] = useState<{ value: unknown; column: number; row: number } | null>(null);
  const [chart, setChart] = useState<ChartConfig | null>(null);
  const queryClient = useQueryClient();

  // The saved query's chart config, when the job ran for one.
  const saved = useQuery({
    queryKey: ["saved-queries", savedQueryId, "chart"],
    queryFn: ({ signal }) => get<SavedQuery>(`/saved-queries/${enc(savedQueryId ?? "")}`, { signal }),
    enabled: !!savedQueryId,
    staleTime: 30_000,
  });
  const savedChart = fittingChart(saved.data?.chart as ChartConfig | null | undefined, result.columns);
  const shownView = view ?? (savedChart ? "chart" : "table");
  const chartConfig = chart ?? savedChart;

  const server = scope === "all";
  const sortText = server ? sortParam(sort, result.columns) : null;
  const filterTexts = useMemo(
    () => (server ? filters.map((f) => filterParam(f, result.columns)) : []),
    [server, filters, result.columns],
  );
  const key = pageIdentity(pageIndex, sortText, filterTexts);
  const query = useQuery({
    queryKey: resultPageKey(job.id, pageIndex, sortText, filterTexts),
    queryFn: async ({ signal }): Promise<LoadedPage> => {
      const search = new URLSearchParams({ page_size: String(PAGE_SIZE), offset: String(pageIndex * PAGE_SIZE) });
      if (sortText) search.set("sort", sortText);
      for (const f of filterTexts) search.append("filter", f);
      const body = await get<ResultPage>(`/jobs/${enc(job.id)}/result?${search}`, { signal });
      return { key, columns: body.columns, rows: body.rows, rowCount: body.row_count ?? total };
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
  const fetched = page && page.key === key ? page.rows : null;
  // On this page only: sorted and filtered here.
  const rows = useMemo(
    () => (fetched && !server ? sortRows(filterRows(fetched, filters, columns), sort, columns) : fetched),
    [fetched, server, filters, sort, columns],
  );
  const viewCount = page && page.key === key ? page.rowCount : server ? null : total;
  const pageCount = Math.max(1, Math.ceil((server ? (viewCount ?? 0) : total) / PAGE_SIZE));
  const range = pageRange(pageIndex, fetched?.length ?? 0);
  const active = sort !== null || filters.length > 0;

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
  const copyBlock = (block: Block, what: string) =>
    copy(formatRows(block.columns, block.rows, format), `${what} as ${format === "markdown" ? "Markdown" : format.toUpperCase()}`);

  const restart = () => setPageIndex(0);
  const changeSort = (next: SortSpec | null) => {
    setSort(next);
    if (server) restart();
  };
  const base = `${API}/jobs/${enc(job.id)}/result`;
  // Downloads hold the rows as the grid shows them (sorted and filtered, over the whole result
  // whichever scope is chosen) and are named after the tab or query.
  const download = downloadQuery(sortParam(sort, result.columns), filters.map((f) => filterParam(f, result.columns)), downloadName);

  const saveChart = async () => {
    if (!savedQueryId || !chartConfig) return;
    try {
      const updated = await patch<SavedQuery>(`/saved-queries/${enc(savedQueryId)}`, { chart: chartConfig });
      queryClient.setQueryData(["saved-queries", savedQueryId, "chart"], updated);
      announce("Chart saved with the query");
    } catch (err) {
      announce(err instanceof ApiError ? `Chart not saved: ${err.message}` : "Chart not saved.");
    }
  };

  const what = sort && filters.length ? "Sorted and filtered" : sort ? "Sorted" : "Filtered";
  const scopeNote = !active
    ? ""
    : server
      ? `${what} over all ${plural(total, "row")}` +
        (filters.length && viewCount !== null ? `: ${plural(viewCount, "row")} match` : "")
      : `${what} on this page` +
        (filters.length && rows && fetched ? `: ${formatCount(rows.length)} of ${plural(fetched.length, "row")} match` : "");

  return (
    <section
      className="result-view"
      style={height ? { height: fittedHeight(height, total, shownView) } : undefined}
      aria-label="Result"
      data-testid="result-view"
    >
      <div className="toolbar result-toolbar">
        <span className="result-count" data-testid="result-count">
          {plural(total, "row")}
        </span>
        {result.truncated && (
          <span className="badge warn" title="The server kept only the first rows of the result.">
            truncated: only the first {formatCount(total)} rows were kept
          </span>
        )}
        <span className="spacer" />
        <span className="muted result-notice" role="status" data-testid="result-notice">
          {notice}
        </span>
        <div className="segmented" role="group" aria-label="Result view">
          <button type="button" className="small" aria-pressed={shownView === "table"} onClick={() => setView("table")}>
            Table
          </button>
          <button type="button" className="small" aria-pressed={shownView === "chart"} onClick={() => setView("chart")}>
            Chart
          </button>
        </div>
      </div>
      {shownView === "table" && (
        <div className="toolbar result-toolbar rv-tools">
          <button type="button" className="small" onClick={() => setEditingFilter(editingFilter === null ? -1 : null)}>
            Add filter
          </button>
          {multiPage && (
            <div className="segmented" role="group" aria-label="Sort and filter">
              <button
                type="button"
                className="small"
                aria-pressed={scope === "all"}
                title="Sort and filter every row of the result, on the server"
                onClick={() => {
                  setScope("all");
                  restart();
                }}
              >
                All rows
              </button>
              <button
                type="button"
                className="small"
                aria-pressed={scope === "page"}
                title="Sort and filter only the rows of the page shown, in the browser"
                onClick={() => setScope("page")}
              >
                This page
              </button>
            </div>
          )}
          <span className="muted rv-scope" data-testid="result-scope" aria-live="polite" title={scopeNote}>
            {scopeNote}
          </span>
          {active && (
            <button
              type="button"
              className="small link"
              onClick={() => {
                setSort(null);
                setFilters([]);
                restart();
              }}
            >
              Clear
            </button>
          )}
          <span className="spacer" />
          <select aria-label="Copy format" className="small" value={format} onChange={(e) => setFormat(e.target.value as CopyFormat)}>
            <option value="tsv">TSV</option>
            <option value="csv">CSV</option>
            <option value="markdown">Markdown</option>
          </select>
          <button
            type="button"
            className="small"
            disabled={!rows || rows.length === 0}
            title="Copy the rows on this page, with the column names"
            onClick={() => rows && copyBlock({ columns, rows }, plural(rows.length, "row"))}
          >
            Copy page
          </button>
          <button
            type="button"
            className="small"
            disabled={!selection}
            title="Copy the selected cells (Shift+click or Shift+arrows to select more)"
            onClick={() => selection && copyBlock(selection, plural(selection.rows.length * selection.columns.length, "cell"))}
          >
            Copy selection
          </button>
          <span className="muted">Download</span>
          <a className="button small" href={`${base}.csv${download}`} download>
            CSV
          </a>
          <a className="button small" href={`${base}.json${download}`} download>
            JSON
          </a>
          <a className="button small" href={`${base}.parquet${download}`} download>
            Parquet
          </a>
        </div>
      )}
      {shownView === "table" && (
        <FilterBar
          columns={columns}
          filters={filters}
          editing={editingFilter}
          onEdit={setEditingFilter}
          onAdd={(f) => {
            setFilters((current) => [...current, f]);
            if (server) restart();
          }}
          onRemove={(i) => {
            setFilters((current) => current.filter((_, k) => k !== i));
            if (server) restart();
          }}
        />
      )}

      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}

      <div className="result-main">
        {shownView === "chart" ? (
          <ResultChart
            jobId={job.id}
            columns={result.columns}
            rowCount={total}
            filters={filters.map((f) => filterParam(f, result.columns))}
            config={chartConfig}
            onConfig={setChart}
            onSave={savedQueryId ? saveChart : undefined}
            saved={!!saved.data && JSON.stringify(saved.data.chart) === JSON.stringify(chartConfig)}
          />
        ) : rows === null ? (
          !error && <div className="result-empty muted">Loading rows…</div>
        ) : total === 0 ? (
          <div className="result-empty muted" data-testid="result-empty">
            No rows
          </div>
        ) : (
          <>
            {rows.length === 0 && (
              <div className="result-empty muted" data-testid="result-none-match">
                No rows match the filters.
              </div>
            )}
            {rows.length > 0 && (
              <ResultGrid
                columns={columns}
                rows={rows}
                offset={pageIndex * PAGE_SIZE}
                total={viewCount ?? total}
                sort={sort}
                onSort={changeSort}
                onFilter={(column) => setEditingFilter(column)}
                pinned={pinned}
                onPin={(column) => setPinned((current) => togglePinned(current, column))}
                widths={widths}
                onResize={(column, width) => setWidths((current) => withWidth(current, column, width))}
                onCopyValue={(value) => copy(cellText(value) ?? "", "the value")}
                onCopyBlock={(block) => copyBlock(block, plural(block.rows.length * block.columns.length, "cell"))}
                onView={(value, column, row) => setViewing({ value, column, row })}
                onSelection={setSelection}
              />
            )}
          </>
        )}
      </div>

      {shownView === "table" && pageCount > 1 && (
        <nav className="toolbar result-pager" aria-label="Result pages">
          <button type="button" className="small" disabled={pageIndex === 0 || loading} onClick={() => setPageIndex(0)}>
            First page
          </button>
          <button
            type="button"
            className="small"
            disabled={pageIndex === 0 || loading}
            onClick={() => setPageIndex((i) => Math.max(0, i - 1))}
          >
            Previous page
          </button>
          <span data-testid="result-range" aria-live="polite">
            {loading || !fetched
              ? "Loading…"
              : `rows ${formatCount(range.first)}–${formatCount(range.last)} of ${formatCount(viewCount ?? total)}`}
          </span>
          <button
            type="button"
            className="small"
            disabled={pageIndex >= pageCount - 1 || loading}
            onClick={() => setPageIndex((i) => i + 1)}
          >
            Next page
          </button>
          <button
            type="button"
            className="small"
            disabled={pageIndex >= pageCount - 1 || loading}
            onClick={() => setPageIndex(pageCount - 1)}
          >
            Last page
          </button>
        </nav>
      )}
      {viewing && (
        <ValueViewer
          name={columns[viewing.column]?.name ?? ""}
          dataType={columns[viewing.column]?.data_type ?? ""}
          rowNumber={viewing.row}
          value={viewing.value}
          onCopy={(text) => copy(text, "the value")}
          onClose={() => setViewing(null)}
        />
      )}
    </section>
  );
}

/** A given height, shrunk to what a short table needs (a chart keeps the whole height). */
function fittedHeight(height: number, rowCount: number, view: "table" | "chart"): number {
  if (view === "chart") return height;
  // toolbars + gaps + header + rows + horizontal scrollbar + pager
  const needed = 80 + HEADER_HEIGHT + Math.min(rowCount, PAGE_SIZE) * ROW_HEIGHT + 18 + 40;
  return Math.max(260, Math.min(height, needed));
}
