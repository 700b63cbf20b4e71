// What the create forms share: the form frame, field errors, focusing the first invalid field.
import type { FormEvent, ReactNode } from "react";
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

