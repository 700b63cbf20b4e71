// The separator between the SQL editor and the results: drag it, or focus it and use the arrow
// keys (Page Up/Down, Home/End), to give the editor more or less of the height (layout.ts).
import { useRef, type RefObject } from "react";
import { MAX_EDITOR_PERCENT, MIN_EDITOR_PERCENT, percentAfterKey, percentAtPointer } from "./layout";

export function Splitter({
  percent,
  onChange,
  frameRef,
  controls,
}: {
  percent: number;
  onChange(percent: number): void;
  /** The editor's frame: its top is where the share starts, its parent's height is 100 %. */
  frameRef: RefObject<HTMLElement | null>;
  /** The id of the editor's frame (aria-controls). */
  controls: string;
}) {
  const drag = useRef<{ top: number; height: number } | null>(null);
  return (
    <div
      role="separator"
      aria-orientation="horizontal"
      aria-label="Resize the editor"
      aria-controls={controls}
      aria-valuenow={percent}
      aria-valuemin={MIN_EDITOR_PERCENT}
      aria-valuemax={MAX_EDITOR_PERCENT}
      aria-valuetext={`The editor takes ${percent}% of the height`}
      tabIndex={0}
      className="editor-splitter"
      data-testid="editor-splitter"
      title="Drag, or use the arrow keys, to resize the editor"
      onKeyDown={(event) => {
        const next = percentAfterKey(percent, event.key);
        if (next === null) return;
        event.preventDefault();
        onChange(next);
      }}
      onPointerDown={(event) => {
        const frame = frameRef.current;
        const pane = frame?.parentElement;
        if (!frame || !pane || event.button !== 0) return;
        event.preventDefault();
        event.currentTarget.setPointerCapture(event.pointerId);
        drag.current = { top: frame.getBoundingClientRect().top, height: pane.getBoundingClientRect().height };
      }}
      onPointerMove={(event) => {
        if (drag.current) onChange(percentAtPointer(event.clientY, drag.current.top, drag.current.height));
      }}
      onPointerUp={(event) => {
        drag.current = null;
        if (event.currentTarget.hasPointerCapture(event.pointerId)) event.currentTarget.releasePointerCapture(event.pointerId);
      }}
      onPointerCancel={() => {
        drag.current = null;
      }}
    />
  );
}
