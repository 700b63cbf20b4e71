// The frame of a table, view or function page: header (kind, name, badges, Query and Drop),
// the notes on what the user may do, the comment, the facts list, the section tabs and the
// drop confirmation. Each page says only what differs.
import { useState, type ReactNode } from "react";
import type { Can } from "../../../api";
import { DropDialog, EditableComment, ReadOnlyNote } from "../common";
import { Header, NoSelectNote, Tabs, queryInEditor, type TabSpec } from "./parts";

/** One line of the facts list (`<dt>`/`<dd>`). */
export interface Fact {
  label: string;
  value: ReactNode;
  testId?: string;
  className?: string;
}

export interface ObjectPageProps {
  parts: string[];
  kind: "table" | "view" | "function";
  can: Can;
  owner: string | null;
  comment: string;
  onSaveComment(comment: string): Promise<void>;
  onDrop(): Promise<void>;
  /** What the drop dialog says will happen. */
  dropText: ReactNode;
  /** Badges next to the name. */
  badges?: ReactNode;
  /** The SQL path a "Query" button opens in the editor (with SELECT); none for a function. */
  queryPath?: string;
  queryDisabled?: boolean;
  /** Said above the notes (e.g. a failed refetch). */
  alert?: ReactNode;
  /** Say that the rows need SELECT (tables and views the user may not read). */
  noSelectNote?: boolean;
  facts: Fact[];
  tabs: TabSpec[];
  /** A new key starts the tabs over (e.g. a staged table that became active). */
  tabsKey?: string;
}

export function ObjectPage({
  parts,
  kind,
  can,
  owner,
  comment,
  onSaveComment,
  onDrop,
  dropText,
  badges,
  queryPath,
  queryDisabled,
  alert,
  noSelectNote,
  facts,
  tabs,
  tabsKey,
}: ObjectPageProps) {
  const [dropping, setDropping] = useState(false);
  const name = parts[parts.length - 1];
  return (
    <div className="cat-main-inner">
      <Header
        parts={parts}
        kind={kind}
        actions={
          <>
            {queryPath !== undefined && can.select ? (
              <button type="button" onClick={() => queryInEditor(queryPath, name)} disabled={queryDisabled}>
                Query
              </button>
            ) : null}
            {can.drop ? (
              <button type="button" className="danger" onClick={() => setDropping(true)}>
                Drop {kind}
              </button>
            ) : null}
          </>
        }
      >
        {badges}
      </Header>
      {alert}
      <ReadOnlyNote can={can} what={kind} owner={owner} />
      {noSelectNote && kind !== "function" ? <NoSelectNote what={kind} /> : null}
      <EditableComment value={comment} editable={can.modify} onSave={onSaveComment} />
      <dl className="cat-facts">
        {facts.map((fact) => (
          <FactLine key={fact.label} fact={fact} />
        ))}
      </dl>
      <Tabs key={tabsKey} tabs={tabs} />
      {dropping ? (
        <DropDialog
          what={`${kind} ${parts.join(".")}`}
          name={name}
          typeToConfirm={false}
          onClose={() => setDropping(false)}
          onConfirm={onDrop}
        >
          <p>{dropText}</p>
        </DropDialog>
      ) : null}
    </div>
  );
}

function FactLine({ fact }: { fact: Fact }) {
  return (
    <>
      <dt>{fact.label}</dt>
      <dd data-testid={fact.testId} className={fact.className}>
        {fact.value}
      </dd>
    </>
  );
}
