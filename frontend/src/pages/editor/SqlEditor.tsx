// One CodeMirror 6 editor: Spark SQL highlighting, line numbers, bracket matching, history,
// search and replace, completion, lint marks and the run/format keys.
import { useEffect, useRef } from "react";
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { sql, SQLDialect } from "@codemirror/lang-sql";
import {
  bracketMatching,
  defaultHighlightStyle,
  foldGutter,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { lintGutter, lintKeymap } from "@codemirror/lint";
import { highlightSelectionMatches, search, searchKeymap } from "@codemirror/search";
import { EditorState } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder,
} from "@codemirror/view";
import { SPARK_BUILTINS, SPARK_KEYWORDS, sqlCompletionSource, type CompletionHost } from "./completion";

export const SparkSQL = SQLDialect.define({
  keywords: SPARK_KEYWORDS.join(" "),
  builtin: SPARK_BUILTINS.join(" "),
  types:
    "boolean tinyint smallint int integer bigint float double decimal numeric string varchar " +
    "char binary date timestamp timestamp_ntz timestamp_ltz interval array map struct void",
  identifierQuotes: "`",
  backslashEscapes: true,
  doubleQuotedStrings: true,
  operatorChars: "*+-%<>!=&|~^/",
});

export interface EditorCommands {
  run(): void;
  runAll(): void;
  format(): void;
  save(): void;
}

export interface SqlEditorProps {
  initialDoc: string;
  host: CompletionHost;
  commands: EditorCommands;
  onDocChange(doc: string): void;
  onView(view: EditorView | null): void;
}

export function SqlEditor({ initialDoc, host, commands, onDocChange, onView }: SqlEditorProps) {
  const parent = useRef<HTMLDivElement>(null);
  // The latest callbacks, read by the keymap (created once with the view).
  const latest = useRef({ commands, onDocChange });
  latest.current = { commands, onDocChange };

  useEffect(() => {
    const run = (name: keyof EditorCommands) => () => {
      latest.current.commands[name]();
      return true;
    };
    const state = EditorState.create({
      doc: initialDoc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        foldGutter(),
        lintGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        search({ top: true }),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        sql({ dialect: SparkSQL, upperCaseKeywords: true }),
        autocompletion({ override: [sqlCompletionSource(host)], activateOnTypingDelay: 80 }),
        placeholder("Write Spark SQL here — Ctrl+Enter runs the statement at the cursor"),
        keymap.of([
          { key: "Mod-Enter", run: run("run"), preventDefault: true },
          { key: "Shift-Mod-Enter", run: run("runAll"), preventDefault: true },
          { key: "Shift-Alt-f", run: run("format"), preventDefault: true },
          { key: "Mod-Shift-f", run: run("format"), preventDefault: true },
          { key: "Mod-s", run: run("save"), preventDefault: true },
          ...searchKeymap,
          ...closeBracketsKeymap,
          ...completionKeymap,
          ...defaultKeymap,
          ...historyKeymap,
          ...lintKeymap,
          indentWithTab,
        ]),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) latest.current.onDocChange(update.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": "SQL editor" }),
      ],
    });
    const view = new EditorView({ state, parent: parent.current! });
    onView(view);
    return () => {
      onView(null);
      view.destroy();
    };
    // The view is created once per tab; later prop changes go through `latest`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return <div className="sql-editor" ref={parent} data-testid="sql-editor" />;
}
