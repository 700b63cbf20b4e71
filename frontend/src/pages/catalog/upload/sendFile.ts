// Sending a file to a session's uploads with XMLHttpRequest: fetch reports no upload
// progress, and the dialog shows a progress bar.
import { API, ApiError, csrfToken, enc, type ApiErrorBody, type Upload } from "../../../api";
import { mediaTypeOf } from "./uploadSql";

/** POST ``file`` to ``/sessions/{session}/uploads``; ``onProgress`` gets the fraction sent. */
export function sendFile(
  session: string,
  file: File,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${API}/sessions/${enc(session)}/uploads`);
    xhr.setRequestHeader("Content-Type", mediaTypeOf(file));
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      const body = parsed(xhr.responseText);
      if (xhr.status === 201) {
        onProgress(1);
        resolve(body as Upload);
        return;
      }
      const error = (body as { error?: ApiErrorBody } | null)?.error;
      reject(
        new ApiError(xhr.status, error ?? { code: "HTTP_ERROR", message: `The upload failed (HTTP ${xhr.status}).`, details: {} }),
      );
    };
    xhr.onerror = () => reject(new ApiError(0, { code: "NETWORK_ERROR", message: "The upload could not be sent.", details: {} }));
    xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    xhr.send(file);
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null; // not JSON (a proxy's page): the status says what happened
  }
}
