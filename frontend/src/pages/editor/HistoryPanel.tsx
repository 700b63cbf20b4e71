// The user's recent statements (GET /jobs, newest first), filterable; click to reopen.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { qs, type Job, type Page } from "../../api";
import { apiQuery, useDebounced } from "../../data/queries";
import { formatTimestamp } from "../../format";
import { Link } from "../../router";
import { JobStatusBadge } from "../../components/jobs/JobProgress";
import { oneLine } from "./sqlText";
import { errorText } from "./types";

export function HistoryPanel({
  refreshKey,
  onOpen,
  onOpenHere,
}: {
  refreshKey: number;
  onOpen(job: Job): void;
  onOpenHere(job: Job): void;
}) {
  const [filter, setFilter] = useState("");
  const query = useDebounced(filter.trim(), 250);
  const found = useQuery({
    ...apiQuery<Page<Job>>(`/jobs${qs({ q: query, page_size: 50 })}`),
    queryKey: ["jobs", "history", query, refreshKey],
    placeholderData: (previous) => previous,
  });
  // The server filters with q; filter here too in case it does not (yet).
  const needle = query.toLowerCase();
  const jobs = found.data
    ? needle
      ? found.data.items.filter((job) => job.sql.toLowerCase().includes(needle))
      : found.data.items
    : null;
  const error = found.error ? errorText(found.error) : null;

  return (
    <div className="panel-body" data-testid="history-panel">
      <input
        type="search"
        className="history-filter"
        placeholder="Filter by SQL text"
        aria-label="Filter history"
        value={filter}
        onChange={(event) => setFilter(event.target.value)}
      />
      {error && <div className="alert danger">{error}</div>}
      {jobs === null && !error && <p className="muted">Loading…</p>}
      {jobs !== null && jobs.length === 0 && (
        <p className="muted">{query ? "No statement matches." : "No statements run yet."}</p>
      )}
      {jobs !== null && jobs.length > 0 && (
        <ul className="history-list">
          {jobs.map((job) => (
            <li key={job.id} className="history-item" data-testid="history-item">
              <div className="history-meta">
                <JobStatusBadge status={job.status} />
                <time dateTime={job.created_at} className="muted small-text">
                  {formatTimestamp(job.created_at)}
                </time>
                <Link to={`/jobs/${encodeURIComponent(job.id)}`} className="small-text" aria-label="Job page">
                  job
                </Link>
              </div>
              <button
                type="button"
                className="link history-sql"
                title="Open in a new tab"
                onClick={() => onOpen(job)}
              >
                <code>{oneLine(job.sql)}</code>
              </button>
              <button type="button" className="link small-text" onClick={() => onOpenHere(job)}>
                open in this tab
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
