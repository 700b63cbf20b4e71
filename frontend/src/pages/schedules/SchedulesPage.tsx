// /schedules: your scheduled queries (a saved query on a cron schedule in a time zone), their
// latest runs, their alerts, and your notifications. docs/api.md "Schedules and alerts".
import { useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import {
  del,
  enc,
  patch,
  post,
  type Alert,
  type AppNotification,
  type Page,
  type SavedQuery,
  type Schedule,
  type ScheduleRun,
} from "../../api";
import { ErrorAlert } from "../../components/ErrorAlert";
import { formatTimestamp } from "../../format";
import { apiQuery, useWrite } from "../../data/queries";
import { Link, useTitle } from "../../router";
import { OPERATORS, browserTimeZone, runText } from "./schedules";
import "../jobs/jobs-pages.css";

function NewSchedule({ queries }: { queries: SavedQuery[] }) {
  const [query, setQuery] = useState("");
  const [cron, setCron] = useState("0 * * * *");
  const [zone, setZone] = useState(browserTimeZone());
  const create = useWrite(
    (body: { saved_query: string; cron: string; timezone: string }) => post<Schedule>("/schedules", body),
    ["schedules"],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ saved_query: query || (queries[0]?.id ?? ""), cron, timezone: zone });
  };
  return (
    <form className="card schedule-form" onSubmit={submit} aria-label="New schedule">
      <h2>New schedule</h2>
      <label className="inline">
        Saved query
        <select value={query} onChange={(event) => setQuery(event.target.value)}>
          {queries.map((item) => (
            <option key={item.id} value={item.id}>
              {item.name}
            </option>
          ))}
        </select>
      </label>
      <label className="inline">
        Cron (minute hour day month weekday)
        <input value={cron} onChange={(event) => setCron(event.target.value)} />
      </label>
      <label className="inline">
        Time zone
        <input value={zone} onChange={(event) => setZone(event.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={!queries.length || create.isPending}>
        Create
      </button>
      <ErrorAlert error={create.error} />
    </form>
  );
}

function NewAlert({ schedule }: { schedule: Schedule }) {
  const [name, setName] = useState("");
  const [column, setColumn] = useState("");
  const [operator, setOperator] = useState(">");
  const [value, setValue] = useState("");
  const create = useWrite(
    () => post<Alert>("/alerts", { schedule: schedule.id, name, column, operator, value }),
    ["alerts"],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(undefined);
  };
  return (
    <form className="schedule-alert-form" onSubmit={submit} aria-label="New alert">
      <input placeholder="alert name" value={name} onChange={(event) => setName(event.target.value)} />
      <input placeholder="column" value={column} onChange={(event) => setColumn(event.target.value)} />
      <select aria-label="operator" value={operator} onChange={(event) => setOperator(event.target.value)}>
        {OPERATORS.map((item) => (
          <option key={item}>{item}</option>
        ))}
      </select>
      <input placeholder="value" value={value} onChange={(event) => setValue(event.target.value)} />
      <button type="submit">Add alert</button>
      <ErrorAlert error={create.error} />
    </form>
  );
}

function ScheduleCard({ schedule }: { schedule: Schedule }) {
  const runs = useQuery({
    ...apiQuery<Page<ScheduleRun>>(`/schedules/${enc(schedule.id)}/runs?page_size=10`),
    refetchInterval: 10_000,
  });
  const alerts = useQuery(apiQuery<Page<Alert>>(`/alerts?schedule=${enc(schedule.id)}&page_size=100`));
  const toggle = useWrite(
    () => patch<Schedule>(`/schedules/${enc(schedule.id)}`, { enabled: !schedule.enabled }),
    ["schedules"],
  );
  const remove = useWrite(() => del(`/schedules/${enc(schedule.id)}`), ["schedules"]);
  const removeAlert = useWrite((id: string) => del(`/alerts/${enc(id)}`), ["alerts"]);
  return (
    <section className="card" data-testid={`schedule-${schedule.id}`}>
      <h2>{schedule.saved_query_name}</h2>
      <p>
        <code>{schedule.cron}</code> in {schedule.timezone} ·{" "}
        {schedule.next_run_at ? `next run ${formatTimestamp(schedule.next_run_at)}` : "disabled"}{" "}
        <button type="button" onClick={() => toggle.mutate(undefined)}>
          {schedule.enabled ? "Disable" : "Enable"}
        </button>{" "}
        <button type="button" className="danger" onClick={() => remove.mutate(undefined)}>
          Delete
        </button>
      </p>
      <ErrorAlert error={toggle.error ?? remove.error ?? runs.error} />
      <h3>Latest runs</h3>
      <ul className="schedule-runs">
        {(runs.data?.items ?? []).map((run) => (
          <li key={run.id}>
            {formatTimestamp(run.scheduled_for)} · {runText(run)}{" "}
            {run.job ? <Link to={`/jobs/${enc(run.job)}`}>job</Link> : null}
          </li>
        ))}
        {runs.data && !runs.data.items.length ? <li className="muted">No run yet.</li> : null}
      </ul>
      <h3>Alerts</h3>
      <ul className="schedule-alerts">
        {(alerts.data?.items ?? []).map((alert) => (
          <li key={alert.id}>
            <span className={`badge ${alert.state === "triggered" ? "warn" : ""}`}>{alert.state}</span> {alert.name}:{" "}
            <code>
              {alert.column} {alert.operator} {alert.value}
            </code>{" "}
            <button type="button" className="link" onClick={() => removeAlert.mutate(alert.id)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <NewAlert schedule={schedule} />
    </section>
  );
}

function Notifications() {
  const list = useQuery(apiQuery<Page<AppNotification>>("/notifications?page_size=20"));
  const readAll = useWrite(() => post("/notifications/read-all"), ["notifications"]);
  const items = list.data?.items ?? [];
  return (
    <section className="card" aria-label="Notifications" id="notifications">
      <h2>Notifications</h2>
      {items.some((item) => !item.read_at) ? (
        <button type="button" onClick={() => readAll.mutate(undefined)}>
          Mark all read
        </button>
      ) : null}
      <ul data-testid="notifications">
        {items.map((item) => (
          <li key={item.id} className={item.read_at ? "muted" : undefined}>
            {formatTimestamp(item.created_at)} · {item.message}
          </li>
        ))}
        {list.data && !items.length ? <li className="muted">Nothing yet.</li> : null}
      </ul>
    </section>
  );
}

export function SchedulesPage() {
  useTitle("Schedules");
  const schedules = useQuery(apiQuery<Page<Schedule>>("/schedules?page_size=100"));
  const queries = useQuery(apiQuery<Page<SavedQuery>>("/saved-queries?page_size=200"));
  return (
    <div className="page schedules-page" data-testid="schedules-page">
      <div className="jobs-head">
        <h1>Schedules</h1>
      </div>
      <ErrorAlert error={schedules.error} />
      <Notifications />
      <NewSchedule queries={queries.data?.items ?? []} />
      {(schedules.data?.items ?? []).map((schedule) => (
        <ScheduleCard key={schedule.id} schedule={schedule} />
      ))}
    </div>
  );
}

/** The top bar's bell: how many notifications are unread, asked every 30 s. */
export function NotificationBell() {
  const unread = useQuery({ ...apiQuery<{ unread: number }>("/notifications/unread"), refetchInterval: 30_000 });
  const count = unread.data?.unread ?? 0;
  return (
    <Link to="/schedules#notifications" title="Alerts that triggered or cleared" data-testid="bell">
      Notifications{" "}
      {count ? (
        <span className="badge warn" aria-label={`${count} unread`}>
          {count}
        </span>
      ) : null}
    </Link>
  );
}
