// A user-or-team field with completion from GET /principals (names starting with what is
// typed, ≤ 20): a combobox with a listbox of suggestions, each marked user or team. The state
// lives in `usePrincipalPicker` so that the form around it knows the principal it resolves to.
import { useId, useState } from "react";
import type { PrincipalRef, PrincipalType } from "../../../api";
import { useDebounced, usePrincipals } from "../../../data/queries";
import { principalsOf, resolvePrincipal } from "../privileges";
import "../catalog.css";

export interface PickerState {
  text: string;
  setText: (text: string) => void;
  /** Take a suggestion. */
  choose: (principal: PrincipalRef) => void;
  open: boolean;
  setOpen: (open: boolean) => void;
  options: PrincipalRef[];
  loading: boolean;
  /** The principal the field stands for, or null while it is unsure (a name both a user and a
   * team have, a name nobody has). */
  resolved: PrincipalRef | null;
  kind?: PrincipalType;
  reset: () => void;
}

export function usePrincipalPicker(kind?: PrincipalType): PickerState {
  const [text, setText] = useState("");
  const [chosen, setChosen] = useState<PrincipalRef | null>(null);
  const [open, setOpen] = useState(false);
  const settled = useDebounced(text.trim().replace(/^(user|team):/i, ""), 150);
  const found = usePrincipals(settled, kind, open);
  const options = principalsOf(found.data).filter((o) => !kind || o.type === kind);
  const resolved = chosen && chosen.name === text ? chosen : resolvePrincipal(text, options, kind);
  return {
    text,
    setText: (value) => {
      setText(value);
      setChosen(null);
      setOpen(true);
    },
    choose: (principal) => {
      setChosen(principal);
      setText(principal.name);
      setOpen(false);
    },
    open,
    setOpen,
    options,
    loading: found.isFetching,
    resolved,
    kind,
    reset: () => {
      setText("");
      setChosen(null);
      setOpen(false);
    },
  };
}

export function PrincipalPicker({
  picker,
  label,
  placeholder,
}: {
  picker: PickerState;
  label: string;
  placeholder?: string;
}) {
  const id = useId();
  const listId = `${id}-list`;
  const [active, setActive] = useState(0);
  const { options, open, text } = picker;
  const shown = open && text.trim() !== "" && options.length > 0;
  const current = Math.min(active, options.length - 1);

  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!open) picker.setOpen(true);
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive((current + step + options.length) % Math.max(options.length, 1));
    } else if (event.key === "Enter" && shown) {
      event.preventDefault();
      picker.choose(options[current]);
    } else if (event.key === "Escape" && shown) {
      event.preventDefault();
      picker.setOpen(false);
    }
  };

  return (
    <div className="picker">
      <label htmlFor={id}>{label}</label>
      <div className="picker-field">
        <input
          id={id}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={shown}
          aria-controls={listId}
          aria-activedescendant={shown ? `${listId}-${current}` : undefined}
          value={text}
          placeholder={placeholder ?? (picker.kind ? `A ${picker.kind}'s name` : "A user or team")}
          autoComplete="off"
          spellCheck={false}
          onChange={(event) => {
            setActive(0);
            picker.setText(event.target.value);
          }}
          onFocus={() => picker.setOpen(true)}
          onBlur={() => picker.setOpen(false)}
          onKeyDown={onKeyDown}
        />
        {picker.resolved && !picker.kind ? (
          <span className="badge" data-testid="picker-type">
            {picker.resolved.type}
          </span>
        ) : null}
        {shown ? (
          <ul role="listbox" id={listId} className="picker-list" aria-label={`${label}: suggestions`}>
            {options.map((option, index) => (
              <li
                key={`${option.type}:${option.name}`}
                id={`${listId}-${index}`}
                role="option"
                aria-selected={index === current}
                className={index === current ? "active" : undefined}
                // Chosen before the input's blur closes the list.
                onMouseDown={(event) => event.preventDefault()}
                onClick={() => picker.choose(option)}
              >
                <span className="mono">{option.name}</span> <span className="badge">{option.type}</span>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </div>
  );
}
