// What the create forms share: the form frame, field errors, focusing the first invalid field.
import { useState, type FormEvent, type ReactNode } from "react";
import { ApiError } from "../../../api";
import { navigate, useTitle } from "../../../router";
import { Breadcrumbs } from "../common";

export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <div className="field-error" id={id} role="alert">
      {message}
    </div>
  );
}

/** Props that mark an input invalid and point at its error text. */
export function invalid(id: string, message: string | undefined) {
  return message ? { "aria-invalid": true as const, "aria-describedby": id } : {};
}

export function FormShell({
  title,
  crumbs,
  children,
  onSubmit,
  busy,
  submitLabel,
  busyLabel = "Creating…",
  cancelTo,
}: {
  title: string;
  crumbs: string[];
  children: ReactNode;
  onSubmit: () => void;
  busy: boolean;
  submitLabel: string;
  /** What the submit button says while the request runs. */
  busyLabel?: string;
  cancelTo: string;
}) {
  useTitle(title);
  return (
    <div className="cat-main-inner">
      <Breadcrumbs parts={crumbs} />
      <h1>{title}</h1>
      <form
        className="cat-form"
        noValidate
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          onSubmit();
        }}
      >
        {children}
        <div className="toolbar cat-form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? busyLabel : submitLabel}
          </button>
          <button type="button" onClick={() => navigate(cancelTo)} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}

/** A create form's submit: `create` makes the object and answers the page to open next. A
 * failure is kept as `error` (`explain` turns it into what the form marks, e.g. per field), the
 * first invalid field is brought into view, and the form can be sent again. */
export function useCreateSubmit<A extends unknown[], E = unknown>(
  create: (...args: A) => Promise<string>,
  explain: (error: unknown) => E = (error) => error as E,
): { busy: boolean; error: E | null; submit: (...args: A) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<E | null>(null);
  const submit = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      navigate(await create(...args));
    } catch (failure) {
      setError(explain(failure));
      setBusy(false);
      focusFirstInvalid();
    }
  };
  return { busy, error, submit };
}

/** After a failed submit: bring the first field marked invalid (or the alert) into view. */
export function focusFirstInvalid() {
  window.setTimeout(() => {
    const field = document.querySelector<HTMLElement>('.cat-form [aria-invalid="true"]');
    const target = field ?? document.querySelector<HTMLElement>('.cat-form [role="alert"]');
    target?.scrollIntoView({ block: "center" });
    field?.focus({ preventScroll: true });
  }, 0);
}

/** Split an API error into a per-field message (for simple forms) or a general one. */
export function splitError(error: unknown, fields: string[]): { field?: string; general?: unknown } {
  if (error instanceof ApiError && error.field && fields.includes(error.field)) return { field: error.field };
  return error ? { general: error } : {};
}

