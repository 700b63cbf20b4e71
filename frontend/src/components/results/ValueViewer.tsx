// The whole of one value in a dialog: long text with its line breaks (EXPLAIN's plan), JSON,
// arrays, maps and structs pretty-printed, and a Copy button.
import { useEffect, useRef } from "react";
import { countOf, formatCount } from "../../format";
import { viewerText } from "./table";

export function ValueViewer({
  name,
  dataType,
  rowNumber,
  value,
  onCopy,
  onClose,
}: {
  name: string;
  dataType: string;
  rowNumber: number;
  value: unknown;
  onCopy(text: string): void;
  onClose(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  const { text, json } = viewerText(value);
  const isNull = value === null || value === undefined;
  return (
    <dialog
      ref={ref}
      className="rv-viewer"
      aria-labelledby="rv-viewer-title"
      data-testid="value-viewer"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <div className="toolbar rv-viewer-head">
        <h2 id="rv-viewer-title">
          {name} <span className="muted mono">{dataType}</span>
        </h2>
        <span className="muted">
          row {formatCount(rowNumber)}
          {json ? " · JSON" : ""} · {countOf(text.length, "character")}
        </span>
        <span className="spacer" />
        <button type="button" className="small" disabled={isNull} onClick={() => onCopy(text)}>
          Copy value
        </button>
        <button type="button" className="small" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
      <pre className={`rv-viewer-text${isNull ? " null" : ""}`} data-testid="value-viewer-text">
        {text}
      </pre>
    </dialog>
  );
}
