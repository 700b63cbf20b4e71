// What the list pages' filters (jobs, audit) share: the URL's query string and the API's
// parameters are built by `qs` (src/api.ts) from these pieces. Pure (filters.test.ts).
export { qs as searchOf } from "../api";

/** A datetime-local value ("2024-05-01T13:30", the viewer's time zone) as an ISO-8601 instant
 * for the API; undefined when unset or invalid. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A text field as an API parameter: trimmed, undefined when blank. */
export const textParam = (value: string): string | undefined => value.trim() || undefined;

/** The known choices named in a comma-separated URL value ("running,bogus"), in the order
 * given, each compared after `normalize` (e.g. case). */
export function choicesFromText<T extends string>(
  text: string,
  allowed: readonly T[],
  normalize: (part: string) => string = (part) => part,
): T[] {
  return text
    .split(",")
    .map((part) => normalize(part.trim()))
    .filter((part): part is T => (allowed as readonly string[]).includes(part));
}

/** `chosen` in `order`'s order, once each (what the server lists, whatever the clicks' order). */
export const inOrder = <T>(chosen: readonly T[], order: readonly T[]): T[] => order.filter((item) => chosen.includes(item));

/** `chosen` with `item` turned on or off, in `order`'s order. */
export function toggleChoice<T>(chosen: readonly T[], item: T, on: boolean, order: readonly T[]): T[] {
  return order.filter((each) => (each === item ? on : chosen.includes(each)));
}

/** A list of choices as one URL or API value ("A,B"), undefined when empty. */
export const listParam = (chosen: readonly string[]): string | undefined => (chosen.length ? chosen.join(",") : undefined);
