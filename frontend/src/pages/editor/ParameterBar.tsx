// Inputs for the `:name` markers of the tab's SQL, above the results. The values are sent
// with the statement and bound by Spark as literals (never written into the SQL text).
import type { ParameterMode } from "./sqlText";
import type { ParameterEntry } from "./types";

const MODES: { mode: ParameterMode; label: string }[] = [
  { mode: "auto", label: "Auto" },
  { mode: "text", label: "Text" },
  { mode: "null", label: "NULL" },
];

export function ParameterBar({
  names,
  values,
  onChange,
  onRun,
}: {
  names: string[];
  values: Record<string, ParameterEntry>;
  onChange(name: string, entry: ParameterEntry): void;
  onRun(): void;
}) {
  if (names.length === 0) return null;
  return (
    <div className="parameter-bar" role="group" aria-label="Query parameters" data-testid="parameter-bar">
      <span className="muted small-text" title="Values are sent beside the SQL and bound by Spark as literals">
        Parameters
      </span>
      {names.map((name) => {
        const entry = values[name] ?? { value: "", mode: "auto" as const };
        return (
          <label key={name} className="parameter-field">
            <code>:{name}</code>
            <input
              aria-label={`Parameter ${name}`}
              value={entry.value}
              disabled={entry.mode === "null"}
              placeholder={entry.mode === "null" ? "NULL" : "value"}
              onChange={(event) => onChange(name, { ...entry, value: event.target.value })}
              onKeyDown={(event) => {
                if (event.key === "Enter") onRun();
              }}
            />
            <select
              aria-label={`Type of ${name}`}
              value={entry.mode}
              title="Auto: a number when the text is one, else text"
              onChange={(event) => onChange(name, { ...entry, mode: event.target.value as ParameterMode })}
            >
              {MODES.map((option) => (
                <option key={option.mode} value={option.mode}>
                  {option.label}
                </option>
              ))}
            </select>
          </label>
        );
      })}
    </div>
  );
}
