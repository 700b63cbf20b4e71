// The keyboard shortcuts, shown by "?" anywhere outside a text field (and closed by Escape).
import { DataGrid } from "../../components/grid/DataGrid";

export const SHORTCUTS: { keys: string; what: string; where: string }[] = [
  { keys: "?", what: "Show or hide this list", where: "Anywhere" },
  { keys: "Alt+Shift+E / C / J / S", what: "Go to the Editor, Catalog, Jobs, Saved queries", where: "Anywhere" },
  { keys: "Ctrl/Cmd+Enter", what: "Run the statement at the cursor (or the selection)", where: "Editor" },
  { keys: "Ctrl/Cmd+Shift+Enter", what: "Run the whole script", where: "Editor" },
  { keys: "Ctrl/Cmd+S", what: "Save (updates a linked saved query)", where: "Editor" },
  { keys: "Shift+Alt+F", what: "Format the SQL", where: "Editor" },
  { keys: "Ctrl+Space", what: "Complete names", where: "Editor" },
  { keys: "Alt+Shift+T", what: "Reopen the last closed tab", where: "Editor" },
  { keys: "← / →", what: "Move between tabs (tab strip focused)", where: "Editor" },
  { keys: "F2 / double-click", what: "Rename a tab", where: "Editor" },
  { keys: "Enter", what: "Run, from a parameter's input", where: "Editor" },
  { keys: "Arrow keys, Ctrl/Cmd+C", what: "Move in the result grid, copy a cell", where: "Results" },
];

export function ShortcutHelp({ onClose }: { onClose(): void }) {
  return (
    <div
      className="modal-backdrop"
      onClick={(event) => event.target === event.currentTarget && onClose()}
      onKeyDown={(event) => event.key === "Escape" && onClose()}
    >
      <div className="modal card shortcut-help" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title">
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <DataGrid
          headless
          rows={SHORTCUTS}
          className="compact"
          rowKey={(item) => item.keys}
          columns={[
            { header: "Keys", cell: (item) => <kbd>{item.keys}</kbd> },
            { header: "What", cell: (item) => item.what },
            { header: "Where", className: "muted", cell: (item) => item.where },
          ]}
        />
        <div className="modal-actions">
          <button type="button" autoFocus onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}
