// How the UI prints numbers, sizes, durations and times: every page formats through here, so
// one screen never shows "50000 rows" beside "50,000 rows", or two date formats (format.test.ts).

/** Counts and figures use one grouping everywhere, whatever the browser's language. */
const NUMBER_LOCALE = "en-US";

/** A count with thousands separators: 1234567 → "1,234,567"; "—" when not known. */
export function formatCount(value: number | null | undefined): string {
  return typeof value === "number" && Number.isFinite(value) ? Math.round(value).toLocaleString(NUMBER_LOCALE) : "—";
}

/** A figure with at most `digits` decimals and thousands separators: 1234.5678 → "1,234.57". */
export function formatDecimal(value: number | null | undefined, digits = 2): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  return value.toLocaleString(NUMBER_LOCALE, { maximumFractionDigits: digits });
}

/** A count with its noun: (1, "row") → "1 row", (50000, "row") → "50,000 rows". */
export function countOf(value: number, one: string, many = `${one}s`): string {
  return `${formatCount(value)} ${value === 1 ? one : many}`;
}

/** A share as a percentage with one decimal: 0.1234 → "12.3%". */
export function formatPercent(fraction: number): string {
  return `${(Number.isFinite(fraction) ? fraction * 100 : 0).toFixed(1)}%`;
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** A byte count for people: "0 B", "512 B", "1.5 KiB", "12 MiB" (binary units, 3 digits). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return "0 B";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${BYTE_UNITS[unit]}`;
}

/** Milliseconds as a short human duration: "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min". */
export function formatMillis(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.floor(seconds);
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, "0")} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A duration that may be unknown (null, negative): "—", else formatMillis. */
export function formatMaybeMillis(ms: number | null | undefined): string {
  return ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0 ? "—" : formatMillis(ms);
}

/** The clock of a running statement: tenths of a second from the start ("0.0 s", "12.3 s"),
 * then as formatMillis ("4 min 05 s"). */
export function formatElapsed(ms: number): string {
  const safe = Number.isFinite(ms) && ms > 0 ? ms : 0;
  return safe < 60_000 ? `${(safe / 1000).toFixed(1)} s` : formatMillis(safe);
}

/** An event's time relative to an origin, e.g. "+1.234 s", "+2 min 03.5 s". */
export function formatOffset(at: string, origin: string): string {
  const delta = Date.parse(at) - Date.parse(origin);
  if (Number.isNaN(delta)) return "";
  const sign = delta < 0 ? "−" : "+";
  const abs = Math.abs(delta);
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(3)} s`;
  const minutes = Math.floor(abs / 60_000);
  const rest = ((abs % 60_000) / 1000).toFixed(1).padStart(4, "0");
  return `${sign}${minutes} min ${rest} s`;
}

/** A date and time in the viewer's locale and time zone, with seconds (one format for every
 * timestamp in the UI); "—" for none, the text itself when it is not a date. */
export function formatTimestamp(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** A clock time, "hh:mm:ss" in the viewer's time zone (24 h); "—" for none. */
export function formatClock(at: number | string | Date | null | undefined): string {
  if (at === null || at === undefined) return "—";
  const date = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(date.getTime())) return "—";
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** An instant in UTC, as engines state it ("2026-11-24 23:41:50 UTC", milliseconds when not
 * zero); the text itself when it is not a date. */
export function formatUtc(value: string | number | Date): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const iso = date.toISOString(); // 2026-11-24T23:41:50.000Z
  const millis = iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${millis === ".000" ? "" : millis} UTC`;
}
