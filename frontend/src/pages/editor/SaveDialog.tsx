// Save the tab's SQL as a saved query (POST /saved-queries); errors next to their field.
import { useState, type FormEvent } from "react";
import { ApiError, post } from "../../api";
import { errorText, type SavedQuery } from "./types";

export function SaveDialog({
  sql,
  initialName,
  onSaved,
  onClose,
}: {
  sql: string;
  initialName: string;
  onSaved(query: SavedQuery): void;
  onClose(): void;
}) {
  const [name, setName] = useState(initialName);
  const [description, setDescription] = useState("");
  const [shared, setShared] = useState(false);
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setFieldErrors({});
    try {
      const saved = await post<SavedQuery>("/saved-queries", { name, description, sql, shared });
      onSaved(saved);
    } catch (e) {
      if (e instanceof ApiError) {
        const field = e.field ?? (e.code === "ALREADY_EXISTS" ? "name" : undefined);
        if (field && ["name", "description", "sql", "shared"].includes(field)) {
          setFieldErrors({ [field]: `${e.message}` });
          if (field === "sql") setError(e.message);
        } else setError(errorText(e));
      } else setError(errorText(e));
      setBusy(false);
    }
  };

  return (
    <div className="modal-backdrop" onKeyDown={(event) => event.key === "Escape" && onClose()}>
      <form className="modal card" role="dialog" aria-modal="true" aria-labelledby="save-title" onSubmit={submit}>
        <h2 id="save-title">Save query</h2>
        <label className="form-row">
          <span>Name</span>
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            required
            autoFocus
            aria-invalid={!!fieldErrors.name}
          />
        </label>
        {fieldErrors.name && (
          <div className="field-error" role="alert">
            {fieldErrors.name}
          </div>
        )}
        <label className="form-row">
          <span>Description</span>
          <textarea value={description} onChange={(event) => setDescription(event.target.value)} rows={3} />
        </label>
        {fieldErrors.description && <div className="field-error">{fieldErrors.description}</div>}
        <label className="check-row">
          <input type="checkbox" checked={shared} onChange={(event) => setShared(event.target.checked)} />
          <span>Shared with my team</span>
        </label>
        {error && (
          <div className="alert danger" role="alert">
            {error}
          </div>
        )}
        <div className="modal-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy || !name.trim()}>
            {busy ? "Saving…" : "Save"}
          </button>
        </div>
      </form>
    </div>
  );
}
