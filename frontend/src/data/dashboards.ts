// Dashboards (docs/api.md "Dashboards"): a tile runs its saved query as the viewer through
// POST /dashboards/{id}/tiles/{tile}/run, in one session of the page's, with the dashboard's
// parameter values; the answer is kept and followed as an editor statement's is.
import type { QueryClient } from "@tanstack/react-query";
import { ApiError, enc, post, type Job, type ResultPage, type SessionCreated, type StatementAnswer } from "../api";
import type { components } from "../openapi/schema";
import { PAGE_SIZE } from "../components/results/model";
import { FIRST_ANSWER_WAIT_SECONDS, keepAnswer, untilEnded } from "./statements";

export type Dashboard = components["schemas"]["DashboardOut"];
export type Tile = components["schemas"]["TileOut"];
export type ParameterValue = string | number | boolean | null;

/** The grid's width in columns (the server's GRID_COLUMNS) and one row's height in pixels. */
export const GRID_COLUMNS = 12;
export const ROW_PX = 90;

/** Automatic refresh choices, in seconds (the server refuses less than a minute). */
export const REFRESH_CHOICES: { seconds: number | null; label: string }[] = [
  { seconds: null, label: "Off" },
  { seconds: 60, label: "1 minute" },
  { seconds: 300, label: "5 minutes" },
  { seconds: 900, label: "15 minutes" },
  { seconds: 3600, label: "1 hour" },
];

/** A tile's place on the CSS grid (1-based lines). */
export function gridArea(tile: Pick<Tile, "x" | "y" | "w" | "h">): { gridColumn: string; gridRow: string } {
  return { gridColumn: `${tile.x + 1} / span ${tile.w}`, gridRow: `${tile.y + 1} / span ${tile.h}` };
}

/** What an input's text means for a parameter whose default is `sample`: a number stays a
 * number (when the text is one), a boolean a boolean; anything else is text. */
export function typedValue(text: string, sample: unknown): ParameterValue {
  if (typeof sample === "number") {
    const number = Number(text);
    return text.trim() !== "" && Number.isFinite(number) ? number : text;
  }
  if (typeof sample === "boolean" && (text === "true" || text === "false")) return text === "true";
  return text;
}

/** The text an input shows for a value. */
export const valueText = (value: unknown): string => (value === null || value === undefined ? "" : String(value));

/** The values sent with a run: each declared parameter's input, typed as its default. */
export function parameterValues(
  declared: Dashboard["parameters"],
  inputs: Record<string, string>,
): Record<string, ParameterValue> {
  const values: Record<string, ParameterValue> = {};
  for (const parameter of declared) {
    const text = inputs[parameter.name];
    values[parameter.name] = text === undefined ? (parameter.default as ParameterValue) : typedValue(text, parameter.default);
  }
  return values;
}

/** The next tile's place, `w` columns wide: beside the last tile when the row has room for it,
 * else under every tile there is. */
export function nextPlace(tiles: Pick<Tile, "x" | "y" | "w" | "h">[], w: number): { x: number; y: number } {
  const bottom = tiles.reduce((most, tile) => Math.max(most, tile.y + tile.h), 0);
  const last = tiles.reduce<Pick<Tile, "x" | "y" | "w" | "h"> | null>(
    (found, tile) => (!found || tile.y > found.y || (tile.y === found.y && tile.x > found.x) ? tile : found),
    null,
  );
  if (last && last.x + last.w + w <= GRID_COLUMNS) return { x: last.x + last.w, y: last.y };
  return { x: 0, y: bottom };
}

/** One session per dashboard page, opened on first use and shared by its tiles. */
export class PageSession {
  private pending: Promise<string> | null = null;

  current(): Promise<string> {
    this.pending ??= post<SessionCreated>("/sessions", { start: "workspace" }).then((made) => made.id);
    const pending = this.pending;
    pending.catch(() => {
      if (this.pending === pending) this.pending = null;
    });
    return pending;
  }

  forget(): void {
    this.pending = null;
  }
}

export interface TileRun {
  job: Job;
  firstPage: ResultPage | null;
  /** When the answer came (ms since the epoch). */
  at: number;
}

/** Run a tile as the viewer until its job ended. A 404 may be the page's session expiring:
 * the run is sent once more in a new session. */
export async function runTile(
  client: QueryClient,
  session: PageSession,
  dashboard: string,
  tile: string,
  parameters: Record<string, ParameterValue>,
  signal: AbortSignal,
): Promise<TileRun> {
  const path = `/dashboards/${enc(dashboard)}/tiles/${enc(tile)}/run`;
  const send = async () =>
    post<StatementAnswer>(
      path,
      { session: await session.current(), parameters, wait: FIRST_ANSWER_WAIT_SECONDS, page_size: PAGE_SIZE },
      { signal },
    );
  let answer: StatementAnswer;
  try {
    answer = await send();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    session.forget();
    answer = await send();
  }
  const { job, firstPage } = keepAnswer(client, answer);
  const ended = await untilEnded(client, job, signal);
  return { job: ended, firstPage: ended === job ? firstPage : null, at: Date.now() };
}
