// /jobs: the user's jobs, newest first, filtered through the URL's query string, refreshed
// live while any listed job has not ended.
import { useEffect, useMemo, useRef, useState } from "react";
import { useInfiniteQuery } from "@tanstack/react-query";
import { ApiError, TERMINAL, get, qs, type Job, type Page, type User } from "../../api";
import { JOB_POLL_MS, LIST_POLL_MS } from "../../data/client";
import { useClock, useWrite } from "../../data/queries";
import { Link, navigate, pathOf, useLocation, useTitle } from "../../router";
import {
  JobProgress,
  JobStatusBadge,
  cancelJob,
  formatDuration,
} from "../../components/jobs/JobProgress";
import { DataGrid } from "../../components/grid/DataGrid";
import { StreamingBadge } from "../../components/jobs/StreamView";
import { formatRate, isStreaming } from "../../components/jobs/stream";
import { formatTimestamp } from "../../format";
import {
  EVERYONE,
  KINDS,
  NO_FILTERS,
  STATUSES,
  apiParams,
  filtersFromSearch,
  hasFilters,
  oneLine,
  searchOfFilters,
  toggleStatus,
  type JobFilters,
} from "./filters";
import "./jobs-pages.css";

const PAGE_SIZE = 50;

export function JobsPage({ user }: { user: User }) {
  useTitle("Jobs");
  const { search } = useLocation();
  const filters = filtersFromSearch(search);
  // An admin reading another user's (or everyone's) history: whose each job is, and no link
  // into a job that is not theirs (its page and result stay its owner's).
  const others = filters.user.trim() !== "" && filters.user.trim() !== user.username;
  const apiQuery = JSON.stringify(apiParams(filters));

  const [cancelling, setCancelling] = useState<ReadonlySet<string>>(new Set());
  const [actionError, setActionError] = useState<string | null>(null);

  // From the URL as it is now, so a delayed change (the search box) keeps the others.
  const setFilters = (change: Partial<JobFilters>) => {
    const current = filtersFromSearch(new URLSearchParams(window.location.search));
    navigate(`/jobs${searchOfFilters({ ...current, ...change })}`, true);
  };

  // The list: first page on a filter change, more on "Load more"; while a listed job has not
  // ended every loaded page is fetched again, faster while one is being canceled.
  const query = useInfiniteQuery({
    queryKey: ["jobs", "list", apiQuery],
    queryFn: ({ pageParam, signal }) => {
      const params = JSON.parse(apiQuery) as Record<string, string | undefined>;
      return get<Page<Job>>(`/jobs${qs({ ...params, page_size: PAGE_SIZE, page_token: pageParam })}`, { signal });
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_page_token,
    refetchInterval: (q) => {
      const items = q.state.data?.pages.flatMap((page) => page.items) ?? [];
      if (!items.some((job) => !TERMINAL.has(job.status))) return false;
      return items.some((job) => cancelling.has(job.id) && !TERMINAL.has(job.status)) ? JOB_POLL_MS : LIST_POLL_MS;
    },
  });
  const jobs = useMemo(() => {
    if (!query.data) return query.isError ? [] : null;
    const seen = new Set<string>();
    return query.data.pages.flatMap((page) => page.items).filter((job) => !seen.has(job.id) && !!seen.add(job.id));
  }, [query.data, query.isError]);
  const error = query.error
    ? query.data && query.isFetchNextPageError
      ? query.error instanceof ApiError ? query.error.message : "More jobs could not be loaded."
      : query.error instanceof ApiError ? query.error.message : "The jobs could not be loaded."
    : null;
  const next = query.hasNextPage;
  const loadingMore = query.isFetchingNextPage;

  const live = !!jobs && jobs.some((job) => !TERMINAL.has(job.status));
  const now = useClock(live ? LIST_POLL_MS : null);

  const cancelWrite = useWrite(cancelJob, ["jobs"]).mutateAsync;
  const cancel = async (job: Job) => {
    setActionError(null);
    try {
      const fresh = await cancelWrite(job.id);
      if (!TERMINAL.has(fresh.status)) setCancelling((current) => new Set(current).add(job.id));
    } catch (failure) {
      setActionError(failure instanceof ApiError ? failure.message : "Canceling failed.");
      void query.refetch();
    }
  };

  const loadMore = () => void query.fetchNextPage();

  return (
    <div className="page jobs-page">
      <div className="jobs-head">
        <h1>Jobs</h1>
        {live && (
          <span className="muted live-note" aria-live="polite">
            Refreshing every {LIST_POLL_MS / 1000} s while jobs run
          </span>
        )}
      </div>
      <Filters filters={filters} onChange={setFilters} admin={user.is_admin} />
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}
      {actionError && (
        <div className="alert" role="alert">
          {actionError}
        </div>
      )}
      {jobs === null ? (
        <p className="muted">Loading jobs…</p>
      ) : jobs.length === 0 ? (
        <div className="empty-state card" data-testid="jobs-empty">
          {hasFilters(filters) ? (
            <>
              <p>No jobs match these filters.</p>
              <button type="button" onClick={() => navigate("/jobs", true)}>
                Clear filters
              </button>
            </>
          ) : (
            <>
              <p>You have not run any statement yet.</p>
              <Link to="/editor">Open the editor</Link>
            </>
          )}
        </div>
      ) : (
        <DataGrid
          rows={jobs}
          className="jobs-table"
          testId="jobs-table"
          rowKey={(job) => job.id}
          rowAttributes={(job) => ({ "data-job-id": job.id })}
          more={{ next, loading: loadingMore, onMore: loadMore }}
          columns={[
            {
              header: "Created",
              className: "nowrap",
              title: (job) => job.created_at,
              cell: (job) => formatTimestamp(job.created_at),
            },
            ...(others ? [{ header: "User", cell: (job: Job) => job.user }] : []),
            { header: "Status", cell: (job) => <JobStatusBadge status={job.status} /> },
            { header: "Kind", cell: (job) => job.kind },
            {
              header: "SQL",
              className: "sql-cell",
              cell: (job) =>
                job.user === user.username ? (
                  <Link to={pathOf("jobs", job.id)} className="mono one-line" title={job.sql}>
                    {oneLine(job.sql) || "(empty)"}
                  </Link>
                ) : (
                  <span className="mono one-line" title={job.sql}>
                    {oneLine(job.sql) || "(empty)"}
                  </span>
                ),
            },
            { header: "Duration", className: "nowrap", cell: (job) => formatDuration(job, now) },
            { header: "Progress", cell: (job) => <LiveProgress job={job} /> },
            {
              header: "Actions",
              hideHeader: true,
              cell: (job) =>
                job.status === "CREATED" || job.status === "RUNNING" ? (
                  <button
                    type="button"
                    className="small danger"
                    disabled={cancelling.has(job.id)}
                    onClick={() => void cancel(job)}
                    aria-label={`${isStreaming(job) ? "Stop stream" : "Cancel job"} ${oneLine(job.sql, 40)}`}
                  >
                    {cancelling.has(job.id) ? "Canceling…" : isStreaming(job) ? "Stop" : "Cancel"}
                  </button>
                ) : null,
            },
          ]}
        />
      )}
    </div>
  );
}

/** A job's progress while it runs: a stream's input rate, else its stages and tasks. */
function LiveProgress({ job }: { job: Job }) {
  if (TERMINAL.has(job.status)) return null;
  if (!isStreaming(job)) return <JobProgress job={job} />;
  return (
    <span className="nowrap">
      <StreamingBadge />{" "}
      {job.progress.stream && (
        <span className="muted small-text">{formatRate(job.progress.stream.input_rows_per_second)} rows/s</span>
      )}
    </span>
  );
}

function Filters({
  filters,
  onChange,
  admin,
}: {
  filters: JobFilters;
  onChange: (c: Partial<JobFilters>) => void;
  admin: boolean;
}) {
  // The search box commits after a short pause so typing does not reload on every key.
  const [q, setQ] = useState(filters.q);
  const commit = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(commit.current), []);
  // Follow the URL (back/forward, "Clear filters") unless the user is typing.
  useEffect(() => {
    if (commit.current === undefined) setQ(filters.q);
  }, [filters.q]);
  const flush = (value: string) => {
    window.clearTimeout(commit.current);
    commit.current = undefined;
    onChange({ q: value });
  };
  const typeQ = (value: string) => {
    setQ(value);
    window.clearTimeout(commit.current);
    commit.current = window.setTimeout(() => flush(value), 350);
  };

  return (
    <form className="jobs-filters card" role="search" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
      <fieldset className="status-filter">
        <legend>Status</legend>
        {STATUSES.map((status) => (
          <label key={status} className="inline">
            <input
              type="checkbox"
              checked={filters.status.includes(status)}
              onChange={() => onChange({ status: toggleStatus(filters, status) })}
            />
            {status}
          </label>
        ))}
      </fieldset>
      <label>
        Kind
        <select value={filters.kind} onChange={(e) => onChange({ kind: e.target.value })}>
          <option value="">Any kind</option>
          {KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </label>
      <label>
        Created after
        <input
          type="datetime-local"
          value={filters.createdAfter}
          onChange={(e) => onChange({ createdAfter: e.target.value })}
        />
      </label>
      <label>
        Created before
        <input
          type="datetime-local"
          value={filters.createdBefore}
          onChange={(e) => onChange({ createdBefore: e.target.value })}
        />
      </label>
      {admin && (
        <label>
          User
          <input
            type="search"
            key={filters.user}
            defaultValue={filters.user}
            placeholder={`You; a name, or ${EVERYONE} for everyone`}
            title="Admins read anyone's query history: SQL, status and times (results stay their owner's)"
            onBlur={(e) => onChange({ user: e.target.value.trim() })}
            onKeyDown={(e) => {
              if (e.key === "Enter") onChange({ user: e.currentTarget.value.trim() });
            }}
          />
        </label>
      )}
      <label className="grow">
        Search SQL
        <input
          type="search"
          value={q}
          placeholder="Text in the SQL"
          onChange={(e) => typeQ(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") flush(q);
          }}
        />
      </label>
      {hasFilters(filters) && (
        <button type="button" className="link" onClick={() => onChange(NO_FILTERS)}>
          Clear filters
        </button>
      )}
    </form>
  );
}
