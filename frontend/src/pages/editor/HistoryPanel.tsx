// The user's recent statements (GET /jobs, newest first), filterable; click to reopen.
import { useEffect, useState } from "react";
import { get, qs, type Job, type Page } from "../../api";
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
  const [query, setQuery] = useState("");
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const timer = setTimeout(() => setQuery(filter.trim()), 250);
    return () => clearTimeout(timer);
  }, [filter]);

  useEffect(() => {
    const controller = new AbortController();
    setError(null);
    get<Page<Job>>(`/jobs${qs({ q: query, page_size: 50 })}`, { signal: controller.signal })
      .then((page) => {
        // The server filters with q; filter here too in case it does not (yet).
        const needle = query.toLowerCase();
        setJobs(needle ? page.items.filter((job) => job.sql.toLowerCase().includes(needle)) : page.items);
      })
      .catch((e: unknown) => {
        if (e instanceof DOMException && e.name === "AbortError") return;
        setError(errorText(e));
      });
    return () => controller.abort();
  }, [query, refreshKey]);

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
                  {new Date(job.created_at).toLocaleString()}
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
