// Spark's EXPLAIN text as trees (pure, unit-tested): each section ("== Physical Plan ==", "==
// Optimized Logical Plan ==", …) is a tree drawn with "+- " / ":- " at three characters per
// level; a node's operator is its first word (without the "*(n) " of whole-stage codegen), and
// EXPLAIN COST adds "Statistics(sizeInBytes=…, rowCount=…)" estimates to logical nodes.

export interface PlanNode {
  operator: string;
  detail: string;
  sizeInBytes: string | null;
  rowCount: string | null;
  children: PlanNode[];
}

export interface PlanSection {
  title: string;
  roots: PlanNode[];
}

const MARKER = /^([ |:]*)([+:]- )(.*)$/;
const STATS = /,?\s*Statistics\(sizeInBytes=([^,)]+)(?:,\s*rowCount=([^,)]+))?[^)]*\)/;

function node(text: string): PlanNode {
  const stats = STATS.exec(text);
  const body = (stats ? text.replace(STATS, "") : text).replace(/^\*(\(\d+\))?\s*/, "").trim();
  const match = /^([A-Za-z][A-Za-z0-9_]*)/.exec(body);
  const operator = match ? match[1] : body.split(/\s/)[0];
  return {
    operator,
    detail: body.slice(operator.length).trim(),
    sizeInBytes: stats ? stats[1].trim() : null,
    rowCount: stats && stats[2] ? stats[2].trim() : null,
    children: [],
  };
}

function parseTree(lines: string[]): PlanNode[] {
  const roots: PlanNode[] = [];
  const stack: PlanNode[] = []; // stack[d] = the last node at depth d
  for (const line of lines) {
    if (!line.trim()) break; // FORMATTED mode: the node details follow a blank line
    const marked = MARKER.exec(line);
    const depth = marked ? marked[1].length / 3 + 1 : 0;
    const text = marked ? marked[3] : line;
    if (!marked && stack.length > 0 && /^\s/.test(line)) {
      // A continuation of the previous node's text (rare): keep it with that node.
      stack[stack.length - 1].detail += " " + line.trim();
      continue;
    }
    const current = node(text);
    if (depth === 0 || stack.length === 0) {
      roots.push(current);
      stack.length = 0;
      stack.push(current);
      continue;
    }
    const parentDepth = Math.min(Math.floor(depth) - 1, stack.length - 1);
    stack[parentDepth].children.push(current);
    stack.length = parentDepth + 1;
    stack.push(current);
  }
  return roots;
}

/** The sections of an EXPLAIN output; text without "== … ==" headers is one "Plan". */
export function parseExplain(text: string): PlanSection[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const sections: PlanSection[] = [];
  let title: string | null = null;
  let body: string[] = [];
  const flush = () => {
    const start = body.findIndex((l) => l.trim() !== "");
    if (title !== null || start >= 0) {
      const roots = start >= 0 ? parseTree(body.slice(start)) : [];
      if (roots.length) sections.push({ title: title ?? "Plan", roots });
    }
  };
  for (const line of lines) {
    const header = /^==\s*(.+?)\s*==\s*$/.exec(line);
    if (header) {
      flush();
      title = header[1];
      body = [];
    } else body.push(line);
  }
  flush();
  return sections;
}

/** Physical plan first (what runs), then the rest in Spark's order. */
export function orderedSections(sections: PlanSection[]): PlanSection[] {
  const physical = sections.filter((s) => /physical/i.test(s.title));
  return [...physical, ...sections.filter((s) => !physical.includes(s))];
}
