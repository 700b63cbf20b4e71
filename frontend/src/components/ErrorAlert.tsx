// A failure shown where it happened: the server's message, and its code unless the form marks
// the field itself (VALIDATION_ERROR).
import { ApiError } from "../api";

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div className="alert" role="alert">
      {errorMessage(error)}
      {code && code !== "VALIDATION_ERROR" ? <span className="cat-code"> ({code})</span> : null}
    </div>
  );
}
