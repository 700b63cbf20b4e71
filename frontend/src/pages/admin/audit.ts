// The audit page's filters as they live in the URL query string and as GET /audit takes them,
// and an event told as a sentence. Pure (unit-tested in audit.test.ts).
import type { AuditAction, AuditEvent } from "../../api";
import { choicesFromText, inOrder, listParam, localToIso, searchOf, textParam, toggleChoice } from "../../data/filters";

/** Every action an event may record (audit/models.py ACTIONS), in that order. */
export const AUDIT_ACTIONS: readonly AuditAction[] = [
  "grant",
  "revoke",
  "owner",
  "drop",
  "team_create",
  "team_delete",
  "member_add",
  "member_remove",
  "token_create",
  "token_revoke",
  "engine_restart",
  "engine_stop",
  "create",
  "alter",
  "read",
  "explain",
  "write",
  "denied",
];

export const ACTION_LABELS: Record<AuditAction, string> = {
  grant: "grant",
  revoke: "revoke",
  owner: "ownership",
  drop: "drop",
  team_create: "team created",
  team_delete: "team deleted",
  member_add: "member added",
  member_remove: "member removed",
  token_create: "token created",
  token_revoke: "token revoked",
  engine_restart: "engine restart",
  engine_stop: "engine stop",
  create: "create",
  alter: "alter",
  read: "read",
  explain: "explain",
  write: "write",
  denied: "denied",
};

export const OBJECT_KINDS = ["catalog", "database", "table", "view", "function", "storage", "team", "token", "engine"];

export interface AuditFilters {
  action: AuditAction[];
  actor: string;
  /** `user:alice` or `team:analysts`. */
  principal: string;
  /** An SQL path of one to three parts: the object and what is inside it. */
  object: string;
  objectKind: string;
  job: string;
  /** datetime-local values ("2024-05-01T13:30"), in the viewer's time zone. */
  since: string;
  until: string;
}

export const NO_AUDIT_FILTERS: AuditFilters = {
  action: [],
  actor: "",
  principal: "",
  object: "",
  objectKind: "",
  job: "",
  since: "",
  until: "",
};

const TEXT_KEYS: [keyof AuditFilters, string][] = [
  ["actor", "actor"],
  ["principal", "principal"],
  ["object", "object"],
  ["objectKind", "object_kind"],
  ["job", "job"],
  ["since", "since"],
  ["until", "until"],
];

export function auditFiltersFromSearch(search: URLSearchParams): AuditFilters {
  const action = inOrder(choicesFromText(search.get("action") ?? "", AUDIT_ACTIONS, (part) => part.toLowerCase()), AUDIT_ACTIONS);
  const filters: AuditFilters = { ...NO_AUDIT_FILTERS, action };
  for (const [field, key] of TEXT_KEYS) (filters[field] as string) = search.get(key) ?? "";
  return filters;
}

/** The query string of the page's URL ("" or "?action=…"), keys in a stable order. */
export function searchOfAuditFilters(filters: AuditFilters): string {
  const params: Record<string, string | undefined> = { action: listParam(inOrder(filters.action, AUDIT_ACTIONS)) };
  for (const [field, key] of TEXT_KEYS) params[key] = textParam(filters[field] as string);
  return searchOf(params);
}

/** GET /audit's query parameters for these filters. */
export function auditApiParams(filters: AuditFilters): Record<string, string | undefined> {
  return {
    action: listParam(inOrder(filters.action, AUDIT_ACTIONS)),
    actor: textParam(filters.actor),
    principal: textParam(filters.principal),
    object: textParam(filters.object),
    object_kind: textParam(filters.objectKind),
    job: textParam(filters.job),
    since: localToIso(filters.since),
    until: localToIso(filters.until),
  };
}

export function hasAuditFilters(filters: AuditFilters): boolean {
  return searchOfAuditFilters(filters) !== "";
}

/** Turn one action on or off. */
export function toggleAction(filters: AuditFilters, action: AuditAction, on: boolean): AuditFilters {
  return { ...filters, action: toggleChoice(filters.action, action, on, AUDIT_ACTIONS) };
}

// --- an event in words ------------------------------------------------------------------------

const str = (value: unknown): string | undefined => (typeof value === "string" && value ? value : undefined);

/** A path from the ways the detail may hold one: `["c","d","v"]`, `{"identifier": [...]}`, "c.d.v". */
function pathText(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(String).join(".") || undefined;
  if (value && typeof value === "object") {
    const identifier = (value as { identifier?: unknown }).identifier;
    const kind = str((value as { kind?: unknown }).kind);
    const path = pathText(identifier);
    return path ? (kind ? `${kind} ${path}` : path) : undefined;
  }
  return str(value);
}

/** "table c.d.t", "catalog c", "storage root /data/x"; "" when the event names no object. */
export function objectText(event: Pick<AuditEvent, "object_kind" | "object">): string {
  const path = event.object.join(".");
  if (!path) return event.object_kind;
  if (event.object_kind === "storage") return `storage root ${path}`;
  return event.object_kind ? `${event.object_kind} ${path}` : path;
}

const principalText = (event: AuditEvent): string =>
  event.principal ? `${event.principal.type} ${event.principal.name}` : "someone";

/** What happened, after the actor's name: "granted SELECT on table c.d.t to team analysts". */
export function describeEvent(event: AuditEvent): string {
  const what = objectText(event);
  const privileges = event.privileges.length ? event.privileges.join(", ") : "privileges";
  const via = pathText(event.detail["via"]);
  const through = via ? ` through ${via.includes(" ") ? via : `view ${via}`}` : "";
  // Team events: the team is the object (kind "team") or the principal.
  const team =
    (event.object_kind === "team" ? event.object[0] : undefined) ??
    (event.principal?.type === "team" ? event.principal.name : undefined) ??
    str(event.detail["team"]) ??
    "";
  const member =
    (event.principal?.type === "user" ? event.principal.name : undefined) ??
    str(event.detail["member"]) ??
    str(event.detail["username"]) ??
    "someone";
  switch (event.action) {
    case "grant":
      return `granted ${privileges} on ${what} to ${principalText(event)}`;
    case "revoke":
      return `revoked ${privileges} on ${what} from ${principalText(event)}`;
    case "owner": {
      const previous = str(event.detail["previous"]) ?? str(event.detail["from"]);
      return `made ${principalText(event)} the owner of ${what}${previous ? ` (was ${previous})` : ""}`;
    }
    case "drop":
      return `dropped ${what}`;
    case "team_create":
      return `created team ${team}`;
    case "team_delete":
      return `deleted team ${team}`;
    case "member_add":
      return `added ${member} to team ${team}`;
    case "member_remove":
      return `removed ${member} from team ${team}`;
    case "token_create":
    case "token_revoke": {
      // The owner is the principal; the detail names the token (never its key).
      const name = str(event.detail["name"]);
      const token = `token${name ? ` "${name}"` : ""}${typeof event.detail["token"] === "number" ? ` #${event.detail["token"]}` : ""}`;
      const whose = event.principal ? ` of ${event.principal.name}` : "";
      if (event.action === "token_create") return `created ${token}${whose}`;
      const reason = str(event.detail["reason"]);
      const why = reason === "logout" ? " (signed out)" : reason === "user_deactivated" ? " (user deactivated)" : "";
      return `revoked ${token}${whose}${why}`;
    }
    case "engine_restart":
    case "engine_stop": {
      // The engine's owner is the principal (none for a spare's or the server's engine).
      const engine = str(event.detail["engine"]);
      const whose = event.principal ? ` of ${event.principal.type} ${event.principal.name}` : "";
      const verb = event.action === "engine_restart" ? "asked to restart" : "asked to stop";
      return `${verb} engine${engine ? ` ${engine.slice(0, 8)}` : ""}${whose}`;
    }
    case "create":
      return `created ${what}`;
    case "alter": {
      const changed = Array.isArray(event.detail["changed"]) ? (event.detail["changed"] as unknown[]).map(String) : [];
      return `changed the ${changed.length ? changed.join(" and ") : "definition"} of ${what}`;
    }
    case "read":
      return `read ${what}${through}`;
    case "explain":
      return `explained a query over ${what}${through}`;
    case "write":
      return `wrote into ${what}`;
    case "denied": {
      const privilege = str(event.detail["privilege"]) ?? event.privileges[0];
      return `was refused ${privilege ? `${privilege} on ` : ""}${what}${through}`;
    }
    default:
      return `${event.action} ${what}`.trim();
  }
}
