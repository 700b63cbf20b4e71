// The editor's syntax colours: CodeMirror's default highlight style with each colour taken from
// a CSS variable (editor.css), so that dark mode (prefers-color-scheme) gets its own palette
// with text contrast ≥ 4.5:1; the default's fixed colours are unreadable on a dark panel.
import { HighlightStyle, defaultHighlightStyle } from "@codemirror/language";

/** The default style's colours, by the variable that replaces each. */
const VARIABLES: Record<string, string> = {
  "#404740": "--cm-meta",
  "#708": "--cm-keyword",
  "#219": "--cm-atom",
  "#164": "--cm-literal",
  "#a11": "--cm-string",
  "#e40": "--cm-special",
  "#00f": "--cm-definition",
  "#30a": "--cm-local",
  "#085": "--cm-type",
  "#167": "--cm-class",
  "#256": "--cm-macro",
  "#00c": "--cm-property",
  "#940": "--cm-comment",
  "#f00": "--cm-invalid",
};

export const sqlHighlightStyle = HighlightStyle.define(
  defaultHighlightStyle.specs.map((spec) => {
    const variable = typeof spec.color === "string" ? VARIABLES[spec.color] : undefined;
    return variable ? { ...spec, color: `var(${variable})` } : spec;
  }),
);
