// Small building blocks of the catalog pages: reading/writing through the data layer, error
// alert, inline comment editor, drop confirmation dialog, key/value table.
import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { del, patch, type Can, type SecurableKind, type Table } from "../../api";
import { LIST_POLL_MS } from "../../data/client";
import { DataGrid } from "../../components/grid/DataGrid";
import { ErrorAlert, errorMessage } from "../../components/ErrorAlert";
import { apiQuery, invalidate, keyOf, useMe, useWrite } from "../../data/queries";
import { Link, pathOf } from "../../router";
import { fullCan, readOnlyText } from "./privileges";
import "./catalog.css";

// --- reading and writing -------------------------------------------------------------------

/** A catalog object read through the data layer, polled while `poll(data)` says it is still
 * changing (e.g. a staged table). */
export function useCatalogQuery<T>(path: string, poll?: (data: T) => boolean) {
  return useQuery({
    ...apiQuery<T>(path),
    refetchInterval: poll ? (query) => (query.state.data && poll(query.state.data) ? LIST_POLL_MS : false) : false,
  });
}

/** PATCH `path`: the answer replaces the cached object, and the catalog views refresh. */
export function usePatch<T>(path: string): (body: unknown) => Promise<void> {
  const client = useQueryClient();
  const { mutateAsync } = useWrite((body: unknown) => patch<T>(path, body), ["catalogs"]);
  return useCallback(
    async (body: unknown) => {
      client.setQueryData(keyOf(path), await mutateAsync(body));
    },
    [client, mutateAsync, path],
  );
}

/** DELETE a catalog object (`url` may carry ?cascade=true); the tree and lists refresh. */
export function useDelete(): (url: string) => Promise<void> {
  return useWrite((url: string) => del(url), ["catalogs"]).mutateAsync;
}

/** Load every tree level and page again (the tree's Refresh button). */
export function useRefreshCatalog(): () => void {
  const client = useQueryClient();
  return useCallback(() => void invalidate(client, "catalogs"), [client]);
}

export { ErrorAlert, errorMessage };

// --- inline comment editor -------------------------------------------------------------------

export function EditableComment({
  value,
  onSave,
  editable = true,
}: {
  value: string;
  onSave: (comment: string) => Promise<void>;
  /** False when the user may not change the object (`can.modify`): no Edit button. */
  editable?: boolean;
}) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(value);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const start = () => {
    setText(value);
    setError(null);
    setEditing(true);
  };
  const save = async () => {
    setSaving(true);
    setError(null);
    try {
      await onSave(text);
      setEditing(false);
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  if (!editing)
    return (
      <div className="cat-comment">
        <p className={value ? "cat-comment-text" : "cat-comment-text muted"} data-testid="comment">
          {value || "No comment."}
        </p>
        {editable ? (
          <button type="button" className="small" onClick={start}>
            Edit comment
          </button>
        ) : null}
      </div>
    );
  return (
    <div className="cat-comment editing">
      <label>
        Comment
        <textarea
          value={text}
          rows={3}
          autoFocus
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Escape") setEditing(false);
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) void save();
          }}
          aria-invalid={error ? true : undefined}
        />
      </label>
      {error ? (
        <div className="field-error" role="alert">
          {errorMessage(error)}
        </div>
      ) : null}
      <div className="toolbar">
        <button type="button" className="primary small" onClick={save} disabled={saving}>
          {saving ? "Saving…" : "Save comment"}
        </button>
        <button type="button" className="small" onClick={() => setEditing(false)} disabled={saving}>
          Cancel
        </button>
      </div>
    </div>
  );
}

// --- confirm and drop dialogs -----------------------------------------------------------------

/** A modal question with one dangerous answer (drop an object, delete a team, remove a
 * member). With `typeToConfirm`, the answer waits until that name is typed. */
export function ConfirmDialog({
  title,
  action,
  busyLabel = "Working…",
  typeToConfirm,
  children,
  onConfirm,
  onClose,
}: {
  title: string;
  /** The button's label, e.g. "Delete team". */
  action: string;
  busyLabel?: string;
  /** A name the user must type before the button answers. */
  typeToConfirm?: string;
  children?: ReactNode;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const ready = typeToConfirm === undefined || typed === typeToConfirm;

  return (
    <dialog
      ref={ref}
      className="cat-dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
      {typeToConfirm !== undefined ? (
        <label>
          Type {typeToConfirm} to confirm
          <input
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        </label>
      ) : null}
      <ErrorAlert error={error} />
      <div className="toolbar cat-dialog-actions">
        <button type="button" className="danger" onClick={() => void confirm()} disabled={!ready || busy}>
          {busy ? busyLabel : action}
        </button>
        <button type="button" onClick={onClose} disabled={busy} autoFocus={typeToConfirm === undefined}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

export function DropDialog({
  what,
  name,
  typeToConfirm,
  children,
  onConfirm,
  onClose,
}: {
  /** e.g. "table demo.sales.orders" */
  what: string;
  /** The name to type when `typeToConfirm`. */
  name: string;
  typeToConfirm: boolean;
  children?: ReactNode;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  return (
    <ConfirmDialog
      title={`Drop ${what}?`}
      action="Drop"
      busyLabel="Dropping…"
      typeToConfirm={typeToConfirm ? name : undefined}
      onConfirm={onConfirm}
      onClose={onClose}
    >
      <div className="cat-dialog-body">{children}</div>
      <p>This cannot be undone.</p>
    </ConfirmDialog>
  );
}

// --- key/value table ---------------------------------------------------------------------------

export function KeyValues({ values, empty }: { values: Record<string, string>; empty: string }) {
  const entries = Object.entries(values);
  if (entries.length === 0) return <p className="muted">{empty}</p>;
  return (
    <DataGrid
      rows={entries}
      className="cat-kv"
      rowKey={([key]) => key}
      columns={[
        { header: "Key", className: "mono", cell: ([key]) => key },
        { header: "Value", className: "mono", cell: ([, value]) => value },
      ]}
    />
  );
}

// --- what the user may do ----------------------------------------------------------------------

/** `can` of a catalog object (docs/api.md): what the signed-in user may do with it. A key the
 * answer lacks (an older server) allows nothing, so no control fails after its confirm. */
export function canOf(object: { can?: Partial<Can> } | null | undefined): Can {
  return fullCan(object?.can);
}

/** Whether the signed-in user may create catalogs (GET /users/me `can.create_catalog`;
 * `TESSERA_CATALOG_CREATORS`). Unknown (loading, an older server) is no. */
export function useMayCreateCatalog(): boolean {
  return useMe().data?.can?.create_catalog === true;
}

/** Why a control is missing, said once near the header: what the user holds on the object,
 * who owns it, and who may change it. */
export function ReadOnlyNote({ can, what, owner }: { can: Can; what: SecurableKind; owner?: string | null }) {
  const text = readOnlyText(what, can, owner);
  if (!text) return null;
  return (
    <p className="muted cat-readonly" data-testid="read-only">
      {text}
    </p>
  );
}

// --- shared page parts -------------------------------------------------------------------------

export function Breadcrumbs({ parts }: { parts: string[] }) {
  const links: { label: string; to: string }[] = [{ label: "Catalogs", to: "/catalog" }];
  if (parts[0]) links.push({ label: parts[0], to: pathOf("catalog", parts[0]) });
  if (parts[1]) links.push({ label: parts[1], to: pathOf("catalog", parts[0], parts[1]) });
  return (
    <nav aria-label="Breadcrumb" className="cat-crumbs">
      {links.map((link, index) => (
        <span key={link.to}>
          {index > 0 ? <span className="muted"> / </span> : null}
          <Link to={link.to}>{link.label}</Link>
        </span>
      ))}
    </nav>
  );
}

export function StatusBadge({ table }: { table: Table }) {
  if (table.status === "staged")
    return (
      <span className="cat-staged">
        <span className="badge staged">staged</span>
        {table.staged_by_job ? (
          <>
            {" "}
            by job <Link to={pathOf("jobs", table.staged_by_job)}>{table.staged_by_job.slice(0, 8)}</Link>
          </>
        ) : null}
      </span>
    );
  return <span className="badge ok">active</span>;
}
