// The editor page's layout, kept per user in localStorage: how much of the height the SQL
// editor takes (the splitter above the results) and whether the side panel is open. Pure
// (layout.test.ts); EditorPage keeps it, every tab shows it.

export interface EditorLayout {
  /** The editor's share of the pane's height, in percent (the rest: parameters and results). */
  editorPercent: number;
  sideOpen: boolean;
}

export const MIN_EDITOR_PERCENT = 10;
export const MAX_EDITOR_PERCENT = 85;
export const DEFAULT_LAYOUT: EditorLayout = { editorPercent: 38, sideOpen: true };
/** One arrow key press; PageUp/PageDown move four times as far. */
export const KEY_STEP = 5;

export const layoutKey = (username: string) => `tessera.layout.v1.${username}`;

/** A share within the bounds, whole percent. */
export function clampPercent(value: number): number {
  if (!Number.isFinite(value)) return DEFAULT_LAYOUT.editorPercent;
  return Math.round(Math.min(MAX_EDITOR_PERCENT, Math.max(MIN_EDITOR_PERCENT, value)));
}

/** A stored layout (the JSON text or null); what is missing or malformed is the default. */
export function parseLayout(raw: string | null): EditorLayout {
  if (!raw) return { ...DEFAULT_LAYOUT };
  try {
    const data = JSON.parse(raw) as Partial<EditorLayout> | null;
    return {
      editorPercent:
        typeof data?.editorPercent === "number" ? clampPercent(data.editorPercent) : DEFAULT_LAYOUT.editorPercent,
      sideOpen: typeof data?.sideOpen === "boolean" ? data.sideOpen : DEFAULT_LAYOUT.sideOpen,
    };
  } catch {
    return { ...DEFAULT_LAYOUT };
  }
}

/** The share after a key on the separator (ArrowUp makes the editor smaller); null for a key
 * the separator does not take. */
export function percentAfterKey(percent: number, key: string): number | null {
  switch (key) {
    case "ArrowUp":
      return clampPercent(percent - KEY_STEP);
    case "ArrowDown":
      return clampPercent(percent + KEY_STEP);
    case "PageUp":
      return clampPercent(percent - 4 * KEY_STEP);
    case "PageDown":
      return clampPercent(percent + 4 * KEY_STEP);
    case "Home":
      return MIN_EDITOR_PERCENT;
    case "End":
      return MAX_EDITOR_PERCENT;
    default:
      return null;
  }
}

/** The share for a pointer at `y` over a pane from `top` of `height` pixels (dragging). */
export function percentAtPointer(y: number, top: number, height: number): number {
  if (!(height > 0)) return DEFAULT_LAYOUT.editorPercent;
  return clampPercent(((y - top) / height) * 100);
}
