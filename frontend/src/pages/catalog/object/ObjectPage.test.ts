import { describe, expect, it } from "vitest";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";

import { fullCan } from "../privileges";
import { ObjectPage, type ObjectPageProps } from "./ObjectPage";

const PROPS: ObjectPageProps = {
  parts: ["demo", "sales", "orders"],
  kind: "table",
  can: fullCan({ select: true, drop: true, modify: true }),
  owner: "alice",
  comment: "Orders",
  onSaveComment: async () => undefined,
  onDrop: async () => undefined,
  dropText: "gone",
  queryPath: "demo.sales.orders",
  facts: [
    { label: "Owner", value: "alice", testId: "owner" },
    { label: "Format", value: "delta", className: "mono" },
  ],
  tabs: [{ id: "schema", label: "Schema", render: () => "the schema" }],
};

const html = (change: Partial<ObjectPageProps> = {}) => renderToStaticMarkup(createElement(ObjectPage, { ...PROPS, ...change }));

describe("ObjectPage", () => {
  it("shows the object's kind and name, its facts and its first tab", () => {
    const out = html();
    expect(out).toContain('<h1 data-testid="object-name"><span class="badge info">table</span> <span class="mono">demo.sales.orders</span></h1>');
    expect(out).toContain('<dt>Owner</dt><dd data-testid="owner">alice</dd><dt>Format</dt><dd class="mono">delta</dd>');
    expect(out).toContain("the schema");
  });

  it("offers Query and Drop only as `can` allows", () => {
    expect(html()).toContain(">Query</button>");
    expect(html()).toContain(">Drop table</button>");
    const reader = html({ can: fullCan({ select: true }) });
    expect(reader).toContain(">Query</button>");
    expect(reader).not.toContain("Drop");
    const fn = html({ kind: "function", queryPath: undefined });
    expect(fn).not.toContain(">Query</button>");
    expect(fn).toContain(">Drop function</button>");
  });

  it("says that the rows need SELECT when asked to", () => {
    expect(html({ noSelectNote: true, can: fullCan({}) })).toContain('data-testid="no-select"');
    expect(html()).not.toContain('data-testid="no-select"');
  });
});
