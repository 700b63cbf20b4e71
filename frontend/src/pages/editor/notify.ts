// When a job the user started ends while they look elsewhere (another browser tab, another
// page of Tessera, another editor tab): a title badge "(n) …" until they come back, and a
// desktop notification when the browser allows it. Permission is asked once, when a run
// first takes long (LONG_RUN_MS), never on page load.
import type { Job } from "../../api";
import { countOf } from "../../format";

export const LONG_RUN_MS = 5_000;
const BADGE = /^\(\d+\) /;

let unseen = 0;
let observer: MutationObserver | null = null;

function applyBadge(): void {
  const base = document.title.replace(BADGE, "");
  const wanted = unseen > 0 ? `(${unseen}) ${base}` : base;
  if (document.title !== wanted) document.title = wanted;
}

/** Keep the badge on whatever title pages set meanwhile. */
function watchTitle(): void {
  if (observer || typeof MutationObserver === "undefined") return;
  const title = document.querySelector("title");
  if (!title) return;
  observer = new MutationObserver(() => applyBadge());
  observer.observe(title, { childList: true, characterData: true, subtree: true });
}

export function unseenCount(): number {
  return unseen;
}

/** The user is back where their jobs show: the badge goes. */
export function markSeen(): void {
  if (unseen === 0) return;
  unseen = 0;
  applyBadge();
}

/** A run has lasted LONG_RUN_MS: the moment to ask for notifications (once). */
export function askPermissionOnce(): void {
  if (typeof Notification === "undefined" || Notification.permission !== "default") return;
  void Notification.requestPermission().catch(() => undefined);
}

/** A job of this user ended; `elsewhere` when its tab is not in view. */
export function jobEnded(job: Job, elsewhere: boolean): void {
  if (!elsewhere) return;
  unseen += 1;
  watchTitle();
  applyBadge();
  if (typeof Notification !== "undefined" && Notification.permission === "granted") {
    const sql = job.sql.replace(/\s+/g, " ").slice(0, 80);
    const rows = job.result ? ` · ${countOf(job.result.row_count, "row")}` : "";
    new Notification(`Tessera: ${job.status.toLowerCase()}${rows}`, { body: sql, tag: job.id });
  }
}
