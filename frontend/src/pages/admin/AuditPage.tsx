// /audit (admins): the append-only log of grants, revokes, ownership changes, drops, team
// changes and which user's job read or wrote which tables; filtered through the URL's query
// string (audit.ts), newest first, a page at a time.
import { useState } from "react";
import type { AuditAction, AuditEvent, User } from "../../api";
import { formatTimestamp } from "../../format";
import { useAudit } from "../../data/queries";
import { Link, navigate, pathOf, useLocation, useTitle } from "../../router";
import { PagedGrid } from "../../components/grid/DataGrid";
import {
  ACTION_LABELS,
  AUDIT_ACTIONS,
  NO_AUDIT_FILTERS,
  OBJECT_KINDS,
  auditApiParams,
  auditFiltersFromSearch,
  describeEvent,
  hasAuditFilters,
  searchOfAuditFilters,
  toggleAction,
  type AuditFilters,
} from "./audit";
import "./admin.css";

const PAGE_SIZE = 50;
const PAGE_KINDS = new Set(["catalog", "database", "table", "view", "function"]);

/** The catalog page of an event's object, when it has one. */
function objectPage(event: AuditEvent): string | null {
  if (!PAGE_KINDS.has(event.object_kind) || event.object.length === 0) return null;
  if (event.object_kind === "catalog" || event.object_kind === "database") return pathOf("catalog", ...event.object);
  const [c, d, name] = event.object;
  return name ? pathOf("catalog", c, d, event.object_kind, name) : null;
}

export function AuditPage({ user }: { user: User }) {
  useTitle("Audit");
  const { search } = useLocation();
  const filters = auditFiltersFromSearch(search);
  const apply = (next: AuditFilters) => navigate(`/audit${searchOfAuditFilters(next)}`, true);

  if (!user.is_admin)
    return (
      <div className="page admin-page">
        <h1>Audit</h1>
        <p className="muted">Only admins may read the audit log. An object's managers see its recent access on its Permissions tab.</p>
      </div>
    );

  return (
    <div className="page admin-page">
      <div className="admin-head">
        <h1>Audit</h1>
        <span className="muted">Grants, ownership, drops, teams, and which jobs read and wrote which tables.</span>
      </div>
      <Filters key={searchOfAuditFilters(filters)} filters={filters} onApply={apply} />
      <Events filters={filters} onFilter={apply} />
    </div>
  );
}

function Filters({ filters, onApply }: { filters: AuditFilters; onApply: (filters: AuditFilters) => void }) {
  // Text fields apply on Enter or "Apply"; checkboxes, kind and times at once (with the text).
  const [draft, setDraft] = useState(filters);
  const set = (change: Partial<AuditFilters>, now = false) => {
    const next = { ...draft, ...change };
    setDraft(next);
    if (now) onApply(next);
  };
  const text = (field: "actor" | "principal" | "object" | "job", label: string, placeholder: string) => (
    <label>
      {label}
      <input
        type="search"
        value={draft[field]}
        placeholder={placeholder}
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => set({ [field]: event.target.value })}
      />
    </label>
  );
  return (
    <form
      className="audit-filters card"
      role="search"
      aria-label="Filter audit events"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <fieldset>
        <legend>Action</legend>
        {AUDIT_ACTIONS.map((action) => (
          <label key={action} className="inline">
            <input
              type="checkbox"
              checked={draft.action.includes(action)}
              onChange={(event) => set(toggleAction(draft, action, event.target.checked), true)}
            />
            {ACTION_LABELS[action]}
          </label>
        ))}
      </fieldset>
      {text("actor", "Actor", "username")}
      {text("principal", "Principal", "team:analysts or user:bob")}
      {text("object", "Object", "catalog.database.table")}
      <label>
        Object kind
        <select value={draft.objectKind} onChange={(event) => set({ objectKind: event.target.value }, true)}>
          <option value="">Any kind</option>
          {OBJECT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </label>
      {text("job", "Job", "job id")}
      <label>
        Since
        <input type="datetime-local" value={draft.since} onChange={(event) => set({ since: event.target.value }, true)} />
      </label>
      <label>
        Until
        <input type="datetime-local" value={draft.until} onChange={(event) => set({ until: event.target.value }, true)} />
      </label>
      <button type="submit">Apply</button>
      {hasAuditFilters(filters) ? (
        <button type="button" className="link" onClick={() => onApply(NO_AUDIT_FILTERS)}>
          Clear filters
        </button>
      ) : null}
    </form>
  );
}

function Events({ filters, onFilter }: { filters: AuditFilters; onFilter: (filters: AuditFilters) => void }) {
  const events = useAudit(auditApiParams(filters), PAGE_SIZE);
  return (
    <PagedGrid
      list={events}
      loadingText="Loading events…"
      empty={
        <div className="empty-state card" data-testid="audit-empty">
          {hasAuditFilters(filters) ? "No events match these filters." : "Nothing has been recorded yet."}
        </div>
      }
      className="admin-table audit-table"
      testId="audit-events"
      rowKey={(event) => String(event.id)}
      rowAttributes={(event) => ({ "data-action": event.action })}
      columns={[
        { header: "When", className: "nowrap", title: (event) => event.at, cell: (event) => formatTimestamp(event.at) },
        {
          header: "Actor",
          cell: (event) =>
            event.actor ? (
              <button
                type="button"
                className="link"
                title={`Only ${event.actor}'s events`}
                onClick={() => onFilter({ ...filters, actor: event.actor ?? "" })}
              >
                {event.actor}
              </button>
            ) : (
              <span className="muted">system</span>
            ),
        },
        {
          header: "Action",
          cell: (event) => (
            <span className={event.action === "denied" ? "badge danger" : "badge"}>
              {(AUDIT_ACTIONS as readonly string[]).includes(event.action)
                ? ACTION_LABELS[event.action as AuditAction]
                : event.action}
            </span>
          ),
        },
        { header: "Event", cell: (event) => <EventText event={event} /> },
      ]}
    />
  );
}

function EventText({ event }: { event: AuditEvent }) {
  const page = objectPage(event);
  return (
    <>
      {event.actor ?? "The system"} {describeEvent(event)}
      {page ? (
        <>
          {" "}
          <Link to={page} className="muted">
            (open)
          </Link>
        </>
      ) : null}
      {event.job ? (
        <>
          {" "}
          <Link to={pathOf("jobs", event.job)}>job {event.job.slice(0, 8)}</Link>
        </>
      ) : null}
    </>
  );
}
