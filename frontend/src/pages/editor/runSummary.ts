// The one-line summary shown after a run ("3 rows", "Now using demo.sales", "12 rows
// written to demo.sales.orders"), read from the job, its events or its one-cell result.
import { enc, get, type Job, type JobEvent, type Page, type ResultPage, type Session } from "../../api";
import { countOf } from "../../format";

/** Result columns that hold a sentence rather than data (no grid is shown for them). */
export const SENTENCE_COLUMNS = new Set(["result", "existed"]);

/** `firstPage`: the result's first page when the run already has it (no request for it then). */
export async function summaryOf(job: Job, session: Session | null, firstPage: ResultPage | null = null): Promise<string | null> {
  if (job.status !== "FINISHED") return null;
  const columns = job.result?.columns.map((column) => column.name) ?? [];
  if (job.kind === "use" && session)
    return `Now using ${session.current_catalog ?? "—"}.${session.current_database ?? "—"}`;
  if (["insert", "ctas", "statement_set"].includes(job.kind)) {
    const events = await get<Page<JobEvent>>(`/jobs/${enc(job.id)}/events?page_size=200`).catch(() => null);
    const written = (events?.items ?? [])
      .filter((event) => event.type === "data_committed" && event.detail && typeof event.detail === "object")
      .map((event) => event.detail as { table?: unknown; rows?: unknown });
    if (written.length > 0)
      return written
        .map((detail) => {
          const table = Array.isArray(detail.table) ? detail.table.join(".") : String(detail.table ?? "");
          return typeof detail.rows === "number" ? `${countOf(detail.rows, "row")} written to ${table}` : `Data written to ${table}`;
        })
        .join("; ");
  }
  if (columns.length > 0 && columns.every((name) => SENTENCE_COLUMNS.has(name)) && columns[0] === "result") {
    const page = firstPage ?? (await get<ResultPage>(`/jobs/${enc(job.id)}/result?page_size=1`).catch(() => null));
    const value = page?.rows[0]?.[0];
    if (typeof value === "string") return value;
  }
  if (job.result && job.kind === "query")
    return `${countOf(job.result.row_count, "row")}${job.result.truncated ? " (truncated)" : ""}`;
  if (!job.result) return `${job.kind.toUpperCase()} finished`;
  return null;
}

