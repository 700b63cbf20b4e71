import { describe, expect, it } from "vitest";
import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";

import { ApiError } from "../../api";
import { DataGrid, LoadMore, PagedGrid, type GridColumn, type PagedList } from "./DataGrid";

interface Team {
  name: string;
  members: number;
}

const TEAMS: Team[] = [
  { name: "analysts", members: 2 },
  { name: "ops", members: 1 },
];

const COLUMNS: GridColumn<Team>[] = [
  { header: "Team", className: "mono", title: (team) => `team ${team.name}`, cell: (team) => team.name },
  { header: "Members", testId: "members", cell: (team, index) => `${index}:${team.members}` },
  { header: "Actions", hideHeader: true, cell: () => createElement("button", { type: "button" }, "Delete") },
];

const html = (element: ReactElement) => renderToStaticMarkup(element);

const list = (change: Partial<PagedList<Team>>): PagedList<Team> => ({
  items: TEAMS,
  next: false,
  loading: false,
  loaded: true,
  error: null,
  loadMore: () => undefined,
  ...change,
});

describe("DataGrid", () => {
  it("draws a grid table from column definitions", () => {
    const out = html(
      createElement(DataGrid<Team>, {
        rows: TEAMS,
        columns: COLUMNS,
        rowKey: (team) => team.name,
        className: "admin-table",
        testId: "teams",
        rowAttributes: (team) => ({ "data-testid": `team-${team.name}` }),
      }),
    );
    expect(out).toContain('<table class="grid admin-table" data-testid="teams">');
    expect(out).toContain('<th scope="col">Team</th><th scope="col">Members</th>');
    expect(out).toContain('<th scope="col"><span class="visually-hidden">Actions</span></th>');
    expect(out).toContain('<tr data-testid="team-ops"><td class="mono" title="team ops">ops</td><td data-testid="members">1:1</td>');
    expect(out.match(/<tr/g)).toHaveLength(3);
  });

  it("draws nothing for no rows, unless asked to show its header", () => {
    const base = { rows: [] as Team[], columns: COLUMNS, rowKey: (team: Team) => team.name };
    expect(html(createElement(DataGrid<Team>, base))).toBe("");
    const out = html(createElement(DataGrid<Team>, { ...base, showEmpty: true }));
    expect(out).toContain("<thead>");
    expect(out).toContain("<tbody></tbody>");
  });

  it("has no header row when headless", () => {
    const out = html(createElement(DataGrid<Team>, { rows: TEAMS, columns: COLUMNS, rowKey: (t) => t.name, headless: true }));
    expect(out).not.toContain("<thead>");
    expect(out).toContain('<td data-testid="members">1:1</td>');
  });

  it("lets a row editor draw its own rows under the headers", () => {
    const out = html(
      createElement(DataGrid<Team>, {
        rows: TEAMS,
        columns: [{ header: "#" }, { header: "Name" }],
        renderRow: (team, index) => createElement("tr", { key: team.name }, createElement("td", null, index), createElement("td", null, team.name)),
      }),
    );
    expect(out).toContain('<th scope="col">#</th><th scope="col">Name</th>');
    expect(out).toContain("<tr><td>1</td><td>ops</td></tr>");
  });

  it("has a Load more under it while there is a next page", () => {
    const more = { next: true, loading: false, onMore: () => undefined };
    const out = html(createElement(DataGrid<Team>, { rows: TEAMS, columns: COLUMNS, rowKey: (t) => t.name, more }));
    expect(out).toMatch(/<\/table><div class="load-more"><button type="button">Load more<\/button><\/div>$/);
  });
});

describe("LoadMore", () => {
  const onMore = () => undefined;
  it("is absent after the last page", () => {
    expect(html(createElement(LoadMore, { next: false, loading: false, onMore }))).toBe("");
  });
  it("says it is loading and cannot be pressed twice", () => {
    expect(html(createElement(LoadMore, { next: true, loading: true, onMore }))).toBe(
      '<div class="load-more"><button type="button" disabled="">Loading…</button></div>',
    );
  });
  it("is a small link inside a panel", () => {
    expect(html(createElement(LoadMore, { next: true, loading: false, onMore, style: "link" }))).toBe(
      '<button type="button" class="link small">Load more</button>',
    );
  });
});

describe("PagedGrid", () => {
  const grid = { columns: COLUMNS, rowKey: (team: Team) => team.name, loadingText: "Loading teams…", empty: "No teams yet." };

  it("says it is loading until the first page is there", () => {
    const out = html(createElement(PagedGrid<Team>, { ...grid, list: list({ items: [], loaded: false }) }));
    expect(out).toBe('<p class="muted">Loading teams…</p>');
  });

  it("shows the empty text for an empty list, and the rows otherwise", () => {
    expect(html(createElement(PagedGrid<Team>, { ...grid, list: list({ items: [] }) }))).toBe("No teams yet.");
    expect(html(createElement(PagedGrid<Team>, { ...grid, list: list({}) }))).toContain("analysts");
  });

  it("shows the list's error instead of loading", () => {
    const error = new ApiError(403, { code: "PERMISSION_DENIED", message: "Admins only." });
    const out = html(createElement(PagedGrid<Team>, { ...grid, list: list({ items: [], loaded: false, error }) }));
    expect(out).toContain('role="alert"');
    expect(out).toContain("Admins only.");
    expect(out).not.toContain("Loading teams…");
  });
});
