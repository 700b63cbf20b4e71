// Cross-page requests to the editor ("open this SQL in a new tab"), kept outside React so
// any page can call them; the editor subscribes.

export interface OpenRequest {
  sql: string;
  title?: string;
  /** Run it at once (e.g. "query this table"). */
  run?: boolean;
  catalog?: string;
  database?: string;
  /** The saved query the SQL is: the tab stays linked to it (Save updates it), and a tab
   * already linked to it is focused instead of opening another one… */
  savedQueryId?: string;
  /** …unless a new tab is asked for. */
  newTab?: boolean;
}

type Listener = (request: OpenRequest) => void;
const listeners = new Set<Listener>();
const pending: OpenRequest[] = [];

/** Ask the editor to open SQL in a new tab; navigate to /editor yourself afterwards. */
export function openInEditor(request: OpenRequest): void {
  if (listeners.size === 0) pending.push(request);
  listeners.forEach((listener) => listener(request));
}

export function onOpenInEditor(listener: Listener): () => void {
  listeners.add(listener);
  pending.splice(0).forEach(listener);
  return () => listeners.delete(listener);
}
