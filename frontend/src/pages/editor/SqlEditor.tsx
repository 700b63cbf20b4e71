// One CodeMirror 6 editor: Spark SQL highlighting, line numbers, bracket matching, history,
// search and replace, completion, lint marks and the run/format keys.
import { useEffect, useRef, useState } from "react";
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
import { sqlHighlightStyle } from "./highlight";
import { failedStatementHighlight } from "./errorMarks";
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
  // The view is created once per tab, with the first text; the latest props are read through
  // this ref by the keymap, the completion source and the update listener.
  const [firstDoc] = useState(initialDoc);
  const latest = useRef({ commands, onDocChange, host, onView });
  useEffect(() => {
    latest.current = { commands, onDocChange, host, onView };
  });

  useEffect(() => {
    const completionHost: CompletionHost = {
      session: () => latest.current.host.session(),
      get cache() {
        return latest.current.host.cache;
      },
    };
    const run = (name: keyof EditorCommands) => () => {
      latest.current.commands[name]();
      return true;
    };
    const state = EditorState.create({
      doc: firstDoc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        foldGutter(),
        lintGutter(),
        failedStatementHighlight(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        search({ top: true }),
        syntaxHighlighting(sqlHighlightStyle, { fallback: true }),
        sql({ dialect: SparkSQL, upperCaseKeywords: true }),
        autocompletion({ override: [sqlCompletionSource(completionHost)], activateOnTypingDelay: 80 }),
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
    const callbacks = latest.current;
    callbacks.onView(view);
    return () => {
      callbacks.onView(null);
      view.destroy();
    };
  }, [firstDoc]);

  return <div className="sql-editor" ref={parent} data-testid="sql-editor" />;
}
