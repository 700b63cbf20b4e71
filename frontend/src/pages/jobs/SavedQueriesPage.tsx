// /saved: saved queries — mine and those teammates share with me; create, edit, delete mine.
// /saved/<id>: a saved query's link — it opens in the editor for anyone who may read it.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { ApiError, del, enc, get, patch, post, qs, type SavedQuery, type User } from "../../api";
import { LoadMore } from "../../components/grid/DataGrid";
import { useDebounced, usePagedQuery, useWrite } from "../../data/queries";
import { navigate, useSegments, useTitle } from "../../router";
import { openInEditor } from "../../store";
import "./jobs-pages.css";


type Scope = "all" | "mine" | "shared";
const SCOPES: { scope: Scope; label: string }[] = [
  { scope: "all", label: "All" },
  { scope: "mine", label: "Mine" },
  { scope: "shared", label: "Shared with me" },
];

interface Draft {
  name: string;
  description: string;
  sql: string;
  shared: boolean;
}

/** A saved query's own address: what "Copy link" copies. */
export const savedQueryLink = (id: string): string => `${window.location.origin}/saved/${encodeURIComponent(id)}`;

// Your own query opens linked (Save in the tab updates it; one tab per query unless a new tab
// is asked for); someone else's opens as a copy to "Save as…".
function openSaved(item: SavedQuery, newTab = false, replace = false) {
  openInEditor({ sql: item.sql, title: item.name, savedQueryId: item.editable ? item.id : undefined, newTab });
  navigate("/editor", replace);
}

export function SavedQueriesPage({ user }: { user: User }) {
  const segments = useSegments();
  return segments.length > 1 ? <SavedQueryLink id={segments[1]} /> : <SavedQueriesList user={user} />;
}

/** /saved/<id>: the query opens in the editor, or the page says why it cannot (missing, or not
 * shared with this user: the API answers both alike, NOT_FOUND). */
function SavedQueryLink({ id }: { id: string }) {
  useTitle("Saved query");
  const found = useQuery({
    queryKey: ["saved-queries", "link", id],
    queryFn: ({ signal }) => get<SavedQuery>(`/saved-queries/${enc(id)}`, { signal }),
    retry: false,
  });
  const item = found.data;
  useEffect(() => {
    if (item) openSaved(item, false, true);
  }, [item]);
  if (found.error) {
    return (
      <section className="page">
        <h1>Saved query</h1>
        <p role="alert" className="error">
          This saved query does not exist, or it is not shared with you.
        </p>
        <p>
          <a href="/saved">Your saved queries</a>
        </p>
      </section>
    );
  }
  return <p className="muted page">Opening the saved query…</p>;
}

function SavedQueriesList({ user }: { user: User }) {
  useTitle("Saved queries");
  const [scope, setScope] = useState<Scope>("all");
  const [search, setSearch] = useState("");
  const [actionError, setActionError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<SavedQuery | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const q = useDebounced(search.trim(), 300);

  // The list through the data layer; every write below invalidates it.
  const list = usePagedQuery<SavedQuery>(`/saved-queries${qs({ scope, q })}`, { pageSize: 100 });
  const items = list.loaded ? list.items : list.error ? [] : null;
  const error =
    actionError ??
    (list.error ? (list.error instanceof ApiError ? list.error.message : "Saved queries could not be loaded.") : null);
  const next = list.next;
  const create = useWrite((draft: Draft) => post<SavedQuery>("/saved-queries", draft), ["saved-queries"]).mutateAsync;
  const change = useWrite(
    ({ id, draft }: { id: string; draft: Draft }) => patch<SavedQuery>(`/saved-queries/${enc(id)}`, draft),
    ["saved-queries"],
  ).mutateAsync;
  const remove = useWrite((id: string) => del(`/saved-queries/${enc(id)}`), ["saved-queries"]).mutateAsync;

  const open = (item: SavedQuery, newTab = false) => openSaved(item, newTab);
  const copyLink = async (item: SavedQuery) => {
    const link = savedQueryLink(item.id);
    try {
      await navigator.clipboard.writeText(link);
      setNotice(`Link to “${item.name}” copied: ${link}`);
    } catch {
      setNotice(`Link to “${item.name}”: ${link}`); // no clipboard here: the link to copy by hand
    }
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    const gone = deleting;
    try {
      await remove(gone.id);
      setDeleting(null);
      setNotice(`Deleted “${gone.name}”.`);
    } catch (failure) {
      setDeleting(null);
      setActionError(failure instanceof ApiError ? failure.message : "Deleting failed.");
    }
  };

  return (
    <div className="page saved-page" data-testid="saved-page">
      <div className="jobs-head">
        <h1>Saved queries</h1>
        <span className="spacer" />
        {!creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New saved query
          </button>
        )}
      </div>

      {creating && (
        <section className="card" aria-labelledby="new-saved-heading">
          <h2 id="new-saved-heading">New saved query</h2>
          <SavedQueryForm
            initial={{ name: "", description: "", sql: "", shared: false }}
            submitLabel="Save"
            onCancel={() => setCreating(false)}
            onSubmit={async (draft) => {
              const created = await create(draft);
              setCreating(false);
              setNotice(`Saved “${created.name}”.`);
            }}
          />
        </section>
      )}

      <div className="saved-controls">
        <div className="tabs" role="tablist" aria-label="Which saved queries">
          {SCOPES.map(({ scope: value, label }) => (
            <button
              key={value}
              type="button"
              role="tab"
              aria-selected={scope === value}
              onClick={() => setScope(value)}
            >
              {label}
            </button>
          ))}
        </div>
        <label className="inline">
          Search by name
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
      </div>

      {notice && (
        <p className="muted" role="status">
          {notice}
        </p>
      )}
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}

      {items === null ? (
        <p className="muted">Loading saved queries…</p>
      ) : items.length === 0 ? (
        <div className="empty-state card" data-testid="saved-empty">
          {q
            ? `No saved query matches “${q}”.`
            : scope === "shared"
              ? "Nobody shares a saved query with you yet."
              : "No saved queries yet. Save one with “New saved query”."}
        </div>
      ) : (
        <ul className="saved-list" aria-label="Saved queries">
          {items.map((item) => (
            <li key={item.id} className="saved-item card" data-testid="saved-item" aria-label={item.name}>
              {editing === item.id ? (
                <SavedQueryForm
                  initial={item}
                  submitLabel="Save changes"
                  onCancel={() => setEditing(null)}
                  onSubmit={async (draft) => {
                    const changed = await change({ id: item.id, draft });
                    setEditing(null);
                    setNotice(`Saved “${changed.name}”.`);
                  }}
                />
              ) : (
                <>
                  <div className="saved-item-head">
                    <h2>{item.name}</h2>
                    {item.shared && <span className="badge info">shared</span>}
                    {!item.editable && (
                      <span className="badge warn" data-testid="read-only">
                        read-only, shared by {item.owner}
                      </span>
                    )}
                    <span className="spacer" />
                    <span className="muted">
                      by {item.owner === user.username ? "you" : item.owner}
                    </span>
                  </div>
                  {item.description && <p className="saved-description">{item.description}</p>}
                  <pre>{item.sql}</pre>
                  <div className="toolbar">
                    <button type="button" className="small" onClick={() => open(item)}>
                      Open in editor
                    </button>
                    <button
                      type="button"
                      className="small"
                      onClick={() => void copyLink(item)}
                      title={item.shared ? "Anyone in your teams can open this link" : "Only you can open this link until you share the query"}
                    >
                      Copy link
                    </button>
                    {item.editable && (
                      <button type="button" className="small" onClick={() => open(item, true)} title="Another tab linked to this query">
                        Open in new tab
                      </button>
                    )}
                    {item.editable && (
                      <>
                        <button type="button" className="small" onClick={() => setEditing(item.id)}>
                          Edit
                        </button>
                        <button type="button" className="small danger" onClick={() => setDeleting(item)}>
                          Delete
                        </button>
                      </>
                    )}
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <LoadMore next={next} loading={list.loading} onMore={list.loadMore} />

      {deleting && (
        <ConfirmDialog
          title="Delete saved query"
          confirmLabel="Delete"
          onConfirm={() => void confirmDelete()}
          onCancel={() => setDeleting(null)}
        >
          Delete “{deleting.name}”? This cannot be undone.
        </ConfirmDialog>
      )}
    </div>
  );
}

function SavedQueryForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  initial: Draft;
  submitLabel: string;
  onSubmit: (draft: Draft) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<Draft>({
    name: initial.name,
    description: initial.description,
    sql: initial.sql,
    shared: initial.shared,
  });
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const uid = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit(draft);
    } catch (failure) {
      setError(
        failure instanceof ApiError
          ? failure
          : new ApiError(0, { code: "ERROR", message: "Saving failed." }),
      );
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (field: string) =>
    error && error.field === field ? (
      <span className="field-error" id={`${uid}-${field}-error`}>
        {error.message}
      </span>
    ) : null;
  const invalid = (field: string) => (error?.field === field ? true : undefined);

  return (
    <form className="saved-form" onSubmit={submit}>
      {error && !["name", "description", "sql", "shared"].includes(error.field ?? "") && (
        <div className="alert" role="alert">
          {error.message}
        </div>
      )}
      <div className="field">
        <label htmlFor={`${uid}-name`}>Name</label>
        <input
          id={`${uid}-name`}
          value={draft.name}
          required
          maxLength={200}
          aria-invalid={invalid("name")}
          aria-describedby={invalid("name") ? `${uid}-name-error` : undefined}
          onChange={(e) => setDraft({ ...draft, name: e.target.value })}
        />
        {fieldError("name")}
      </div>
      <div className="field">
        <label htmlFor={`${uid}-description`}>Description</label>
        <input
          id={`${uid}-description`}
          value={draft.description}
          aria-invalid={invalid("description")}
          aria-describedby={invalid("description") ? `${uid}-description-error` : undefined}
          onChange={(e) => setDraft({ ...draft, description: e.target.value })}
        />
        {fieldError("description")}
      </div>
      <div className="field">
        <label htmlFor={`${uid}-sql`}>SQL</label>
        <textarea
          id={`${uid}-sql`}
          value={draft.sql}
          required
          spellCheck={false}
          aria-invalid={invalid("sql")}
          aria-describedby={invalid("sql") ? `${uid}-sql-error` : undefined}
          onChange={(e) => setDraft({ ...draft, sql: e.target.value })}
        />
        {fieldError("sql")}
      </div>
      <label className="inline">
        <input
          type="checkbox"
          checked={draft.shared}
          onChange={(e) => setDraft({ ...draft, shared: e.target.checked })}
        />
        Share with my teams (read-only for them)
      </label>
      {fieldError("shared")}
      <div className="toolbar">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ConfirmDialog({
  title,
  confirmLabel,
  onConfirm,
  onCancel,
  children,
}: {
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      <p>{children}</p>
      <div className="toolbar">
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
        <button type="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
