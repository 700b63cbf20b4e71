// What privileges mean and where they may be granted, for the Permissions tab and the
// read-only notes. Pure (unit-tested in privileges.test.ts); the rule itself is the server's
// (core/privileges.py): these tables mirror its HOLDS and GRANTABLE.
import type {
  Can,
  ObjectRef,
  PermissionChange,
  PrincipalRef,
  PrincipalType,
  Privilege,
  PrivilegeAssignment,
  SecurableKind,
} from "../../api";

/** The order privileges are listed in (core.privileges.ORDER). */
export const ORDER: readonly Privilege[] = ["USE", "SELECT", "MODIFY", "CREATE", "EXECUTE", "MANAGE", "READ FILES"];

const CONTAINER: Privilege[] = ["USE", "SELECT", "MODIFY", "CREATE", "EXECUTE", "MANAGE"];

/** What may be granted on each kind (a catalog or database grant reaches what is inside). */
export const GRANTABLE: Readonly<Record<SecurableKind, readonly Privilege[]>> = {
  catalog: CONTAINER,
  database: CONTAINER,
  table: ["USE", "SELECT", "MODIFY", "MANAGE"],
  view: ["USE", "SELECT", "MANAGE"],
  function: ["USE", "EXECUTE", "MANAGE"],
};

/** What a privilege means on each kind itself (`can` reports these). */
export const HOLDS: Readonly<Record<SecurableKind, readonly Privilege[]>> = {
  catalog: ["USE", "CREATE", "MANAGE"],
  database: ["USE", "CREATE", "MANAGE"],
  table: ["USE", "SELECT", "MODIFY", "MANAGE"],
  view: ["USE", "SELECT", "MANAGE"],
  function: ["USE", "EXECUTE", "MANAGE"],
};

const MEANING: Record<Privilege, Partial<Record<SecurableKind, string>>> = {
  USE: {
    catalog: "see and enter the catalog and its databases",
    database: "see and enter the database",
    table: "see the table: its name, schema and details",
    view: "see the view and its query",
    function: "see the function and its definition",
  },
  SELECT: {
    catalog: "read the rows of every table and view in the catalog",
    database: "read the rows of every table and view in the database",
    table: "read its rows",
    view: "read its rows",
  },
  MODIFY: {
    catalog: "write into every table in the catalog",
    database: "write into every table in the database",
    table: "write into it (INSERT, OVERWRITE, upserts, ANALYZE)",
  },
  CREATE: {
    catalog: "create databases in the catalog",
    database: "create tables, views and functions in the database",
  },
  EXECUTE: {
    catalog: "call every function in the catalog",
    database: "call every function in the database",
    function: "call it",
  },
  MANAGE: {
    catalog: "change, drop and grant privileges on the catalog and everything in it",
    database: "change, drop and grant privileges on the database and everything in it",
    table: "change, drop and grant privileges on it",
    view: "change, drop and grant privileges on it",
    function: "change, drop and grant privileges on it",
  },
  "READ FILES": {},
};

/** The privileges that may be granted on `kind`, in order. */
export function grantable(kind: SecurableKind): Privilege[] {
  return [...GRANTABLE[kind]];
}

/** What `privilege` granted on a `kind` lets its holder do ("read its rows"). */
export function meaning(privilege: Privilege, kind: SecurableKind): string {
  return MEANING[privilege][kind] ?? privilege;
}

/** Known privileges only, each once, in ORDER. */
export function sortPrivileges(privileges: Iterable<string>): Privilege[] {
  const chosen = new Set(privileges);
  return ORDER.filter((privilege) => chosen.has(privilege));
}

/** "a", "a and b", "a, b and c". */
export function joinWords(words: readonly string[]): string {
  if (words.length <= 1) return words[0] ?? "";
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

/** Where an inherited grant comes from: "from catalog c", "from database c.d". */
export function inheritedLabel(from: ObjectRef): string {
  return `from ${from.kind} ${from.identifier.join(".")}`;
}

export const principalKey = (type: PrincipalType, name: string): string => `${type}:${name}`;

/** One row of "Who has access": a principal's privileges from one place. */
export interface AccessRow {
  key: string;
  principal: string;
  type: PrincipalType;
  privileges: Privilege[];
  /** null: granted on the object itself (revocable here). */
  from: ObjectRef | null;
}

/** The assignments as rows: those granted on the object first, then those from its database,
 * then from its catalog; within each, teams and users by name. */
export function accessRows(assignments: readonly PrivilegeAssignment[]): AccessRow[] {
  const rank = (from: ObjectRef | null) => (from === null ? 0 : from.kind === "database" ? 1 : 2);
  return assignments
    .filter((a) => a.privileges.length > 0)
    .map((a) => ({
      key: `${principalKey(a.principal_type, a.principal)}@${a.inherited_from ? `${a.inherited_from.kind}:${a.inherited_from.identifier.join(".")}` : ""}`,
      principal: a.principal,
      type: a.principal_type,
      privileges: sortPrivileges(a.privileges),
      from: a.inherited_from,
    }))
    .sort(
      (a, b) =>
        rank(a.from) - rank(b.from) ||
        a.type.localeCompare(b.type) ||
        a.principal.localeCompare(b.principal, undefined, { sensitivity: "base" }),
    );
}

/** What `principal` holds by grants on the object itself. */
export function directPrivileges(
  assignments: readonly PrivilegeAssignment[],
  type: PrincipalType,
  principal: string,
): Privilege[] {
  const same = (a: PrivilegeAssignment) =>
    a.inherited_from === null &&
    a.principal_type === type &&
    (type === "team" ? a.principal.toLowerCase() === principal.toLowerCase() : a.principal === principal);
  return sortPrivileges(assignments.filter(same).flatMap((a) => a.privileges));
}

/** The PATCH change that grants `chosen` to a principal: only what it does not hold directly
 * yet; null when there is nothing to add. */
export function grantChange(
  assignments: readonly PrivilegeAssignment[],
  type: PrincipalType,
  principal: string,
  chosen: Iterable<string>,
): PermissionChange | null {
  const held = new Set(directPrivileges(assignments, type, principal));
  const add = sortPrivileges(chosen).filter((privilege) => !held.has(privilege));
  if (!principal.trim() || add.length === 0) return null;
  return { principal: principal.trim(), principal_type: type, add, remove: [] };
}

/** The PATCH change that revokes `privileges` from a principal. */
export function revokeChange(type: PrincipalType, principal: string, privileges: Iterable<string>): PermissionChange {
  return { principal, principal_type: type, add: [], remove: sortPrivileges(privileges) };
}

export const NO_RIGHTS: Can = {
  modify: false,
  drop: false,
  create: false,
  manage: false,
  select: false,
  write: false,
  execute: false,
  transfer_owner: false,
};

/** `can` with every key: a key the server did not send allows nothing (an older server), so
 * no control is offered that would fail after its confirm. */
export function fullCan(can: Partial<Can> | null | undefined): Can {
  return { ...NO_RIGHTS, ...(can ?? {}) };
}

/** The privileges beyond seeing it that `can` says the user holds on an object of `kind`. */
export function heldFromCan(can: Can, kind: SecurableKind): Privilege[] {
  const held: Privilege[] = [];
  if (can.select) held.push("SELECT");
  if (can.write) held.push("MODIFY");
  if (can.create) held.push("CREATE");
  if (can.execute) held.push("EXECUTE");
  if (can.manage) held.push("MANAGE");
  return sortPrivileges(held.filter((privilege) => HOLDS[kind].includes(privilege)));
}

/** The read-only note of an object page: what the user holds, who owns it, who may change it.
 * Empty when the user may change it (no note). */
export function readOnlyText(kind: SecurableKind, can: Can, owner: string | null | undefined): string {
  if (can.manage || can.modify || can.drop) return "";
  const held = heldFromCan(can, kind);
  const owned = owner ? `; its owner is ${owner}` : "";
  const holds = held.length ? `You hold ${joinWords(held)} on this ${kind}` : `You may see this ${kind}`;
  return `${holds}${owned}. Only its owner, holders of MANAGE on it or on what contains it, and admins may change or drop it.`;
}

/** "Your access" in words: each privilege the user holds and what it lets them do. */
export function effectiveLines(effective: readonly string[], kind: SecurableKind): { privilege: Privilege; meaning: string }[] {
  return sortPrivileges(effective).map((privilege) => ({ privilege, meaning: meaning(privilege, kind) }));
}

// --- principals (the picker) -------------------------------------------------------------------

/** The users and teams of a GET /principals answer (none while it loads). */
export function principalsOf(body: { items: PrincipalRef[] } | undefined): PrincipalRef[] {
  return body?.items ?? [];
}

/** The principal a typed name stands for: "team:analysts" / "user:bob" say so; with one kind
 * allowed, that kind; else the one suggestion of that name (any case); null when unsure. */
export function resolvePrincipal(
  text: string,
  options: readonly PrincipalRef[],
  kind?: PrincipalType,
): PrincipalRef | null {
  const typed = text.trim();
  const prefixed = /^(user|team):(.+)$/i.exec(typed);
  if (prefixed) {
    const type = prefixed[1].toLowerCase() as PrincipalType;
    const name = prefixed[2].trim();
    return name && (!kind || kind === type) ? { type, name } : null;
  }
  if (!typed) return null;
  if (kind) return { type: kind, name: options.find((o) => o.type === kind && o.name === typed)?.name ?? typed };
  const exact = options.filter((o) => o.name === typed);
  if (exact.length === 1) return exact[0];
  const folded = options.filter((o) => o.name.toLowerCase() === typed.toLowerCase());
  return folded.length === 1 ? folded[0] : null;
}
