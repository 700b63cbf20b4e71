import { describe, expect, it } from "vitest";
import {
  indexOfCodePoint,
  mapCursorThroughFormat,
  mapErrorPosition,
  offsetOf,
  oneLine,
  pathAt,
  refsIn,
  selectItems,
  splitStatements,
  statementAt,
  tablesIn,
} from "./sqlText";

describe("splitStatements", () => {
  it("splits at top-level semicolons with offsets", () => {
    const text = "SELECT 1;\n  SELECT 2 ;";
    const parts = splitStatements(text);
    expect(parts.map((p) => p.text)).toEqual(["SELECT 1", "SELECT 2"]);
    expect(text.slice(parts[1].start, parts[1].end)).toBe("SELECT 2");
    expect(parts[0].stop).toBe(9);
  });

  it("respects quotes, backticks and comments", () => {
    const text =
      "SELECT 'a;b', \"c;d\", `e;f` -- x;y\nFROM t /* ; */;\nSELECT 'it''s;' ; SELECT '\\';'";
    expect(splitStatements(text).map((p) => p.text)).toEqual([
      "SELECT 'a;b', \"c;d\", `e;f` -- x;y\nFROM t /* ; */",
      "SELECT 'it''s;'",
      "SELECT '\\';'",
    ]);
  });

  it("drops empty and comment-only statements", () => {
    expect(splitStatements(";; -- nothing\n;  /* x */ ;SELECT 1").map((p) => p.text)).toEqual([
      "SELECT 1",
    ]);
    expect(splitStatements("   ")).toEqual([]);
  });

  it("keeps a statement set whole", () => {
    const text = "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END; SELECT 3";
    expect(splitStatements(text).map((p) => p.text)).toEqual([
      "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END",
      "SELECT 3",
    ]);
  });

  it("handles an unterminated string as the rest of the text", () => {
    expect(splitStatements("SELECT 1; SELECT 'abc;").map((p) => p.text)).toEqual([
      "SELECT 1",
      "SELECT 'abc;",
    ]);
  });
});

describe("statementAt", () => {
  const text = "SELECT 1;\n\nSELECT 2;\nSELECT 3";
  it("finds the statement containing the cursor", () => {
    expect(statementAt(text, 3)?.text).toBe("SELECT 1");
    expect(statementAt(text, text.indexOf("2"))?.text).toBe("SELECT 2");
    expect(statementAt(text, text.length)?.text).toBe("SELECT 3");
  });
  it("between statements takes the one before; before the first the first", () => {
    expect(statementAt(text, 10)?.text).toBe("SELECT 1");
    expect(statementAt("  SELECT 1", 0)?.text).toBe("SELECT 1");
    expect(statementAt("", 0)).toBeNull();
  });
});

describe("pathAt", () => {
  it("reads completed parts and the partial one", () => {
    const text = "SELECT * FROM demo.sa";
    expect(pathAt(text, text.length)).toMatchObject({
      parts: ["demo"],
      partial: "sa",
      from: text.length - 2,
      pathFrom: 14,
      raw: "demo.sa",
    });
  });
  it("after a dot the partial is empty", () => {
    const text = "FROM demo.sales.";
    expect(pathAt(text, text.length)).toMatchObject({
      parts: ["demo", "sales"],
      partial: "",
      raw: "demo.sales.",
    });
  });
  it("handles backtick-quoted parts, closed and open", () => {
    const text = "FROM `my cat`.`a``b`.`x y";
    expect(pathAt(text, text.length)).toMatchObject({
      parts: ["my cat", "a`b"],
      partial: "x y",
      raw: "`my cat`.`a``b`.`x y",
    });
  });
  it("a bare word and nothing", () => {
    expect(pathAt("SELECT ord", 10)).toMatchObject({ parts: [], partial: "ord", from: 7 });
    expect(pathAt("SELECT ", 7)).toMatchObject({ parts: [], partial: "", from: 7, raw: "" });
  });
  it("an alias prefix", () => {
    const text = "SELECT o.cu FROM t o";
    expect(pathAt(text, 11)).toMatchObject({ parts: ["o"], partial: "cu", from: 9 });
  });
});

describe("tablesIn", () => {
  it("finds FROM and JOIN tables with aliases", () => {
    expect(
      tablesIn(
        "SELECT * FROM demo.sales.orders o JOIN customers AS c ON c.id = o.customer_id " +
          "LEFT JOIN `x y`.z WHERE 1 = 1",
      ),
    ).toEqual([
      { path: "demo.sales.orders", parts: ["demo", "sales", "orders"], alias: "o" },
      { path: "customers", parts: ["customers"], alias: "c" },
      { path: "`x y`.z", parts: ["x y", "z"], alias: null },
    ]);
  });
  it("comma lists, subqueries and table functions", () => {
    const found = tablesIn("SELECT 1 FROM a, b bb, (SELECT 1 FROM c) s, range(10) r, d");
    expect(found.map((ref) => [ref.path, ref.alias, ref.derived?.query ?? null])).toEqual([
      ["a", null, null],
      ["b", "bb", null],
      ["s", "s", "SELECT 1 FROM c"],
      ["c", null, null],
      ["d", null, null],
    ]);
  });
  it("a parenthesised join is not a subquery", () => {
    expect(tablesIn("SELECT * FROM (a JOIN b ON a.k = b.k)").map((ref) => ref.path)).toEqual(["a", "b"]);
  });
  it("ignores FROM inside strings and comments", () => {
    expect(tablesIn("SELECT 'from x' -- from y\nFROM t")).toEqual([
      { path: "t", parts: ["t"], alias: null },
    ]);
  });
  it("an alias is not a keyword", () => {
    expect(tablesIn("SELECT * FROM t WHERE x")).toEqual([{ path: "t", parts: ["t"], alias: null }]);
    expect(tablesIn("SELECT * FROM t GROUP BY x")[0].alias).toBeNull();
  });
});

describe("derived tables", () => {
  it("a CTE is a derived table, with its columns and the tables it reads", () => {
    const sql =
      "WITH big (k, total) AS (SELECT id, amount FROM demo.sales.orders), " +
      "top AS (SELECT b.*, 1 AS one FROM big b) SELECT  FROM top t";
    const [top] = refsIn(sql);
    expect(top).toMatchObject({ path: "top", alias: "t" });
    expect(top.derived?.query).toBe("SELECT b.*, 1 AS one FROM big b");
    const [big] = top.derived?.refs ?? [];
    expect(big).toMatchObject({ path: "big", alias: "b" });
    expect(big.derived?.columns).toEqual(["k", "total"]);
    expect(big.derived?.refs.map((ref) => ref.path)).toEqual(["demo.sales.orders"]);
    // every table, wherever the cursor is: the query's, then its CTEs'
    expect(tablesIn(sql).map((ref) => ref.path)).toEqual(["top", "big", "demo.sales.orders"]);
  });
  it("a CTE does not see itself or later CTEs", () => {
    const [a] = refsIn("WITH a AS (SELECT * FROM a), b AS (SELECT 1 AS x) SELECT * FROM a");
    expect(a.derived?.refs).toEqual([{ path: "a", parts: ["a"], alias: null }]);
  });
  it("CTE names compare case-insensitively, quoted or not", () => {
    const [ref] = refsIn("WITH `My Cte` AS (SELECT 1 AS x) SELECT * FROM `my cte`");
    expect(ref.derived?.query).toBe("SELECT 1 AS x");
  });
  it("tables of an unused CTE still complete (the cursor may be in it)", () => {
    expect(tablesIn("WITH a AS (SELECT  FROM t)").map((ref) => ref.path)).toEqual(["t"]);
  });
  it("VALUES with a column list", () => {
    const [v] = refsIn("SELECT * FROM (VALUES (1, 'a')) AS v (n, s)");
    expect(v).toMatchObject({ path: "v", alias: "v" });
    expect(v.derived?.columns).toEqual(["n", "s"]);
  });
});

describe("selectItems", () => {
  it("names, aliases, column references and stars", () => {
    expect(
      selectItems(
        "SELECT DISTINCT o.id, price AS p, count(*) n, `a b`, qty * 2, t.*, *, 'x' label, " +
          "CASE WHEN x THEN 1 END, CAST(y AS INT) FROM t",
      ),
    ).toEqual([
      { name: "id", source: ["o", "id"] },
      { name: "p", source: null },
      { name: "n", source: null },
      { name: "a b", source: ["a b"] },
      { star: ["t"] },
      { star: [] },
      { name: "label", source: null },
    ]);
  });
  it("stops at the clause after the list, and skips the query's CTEs", () => {
    expect(selectItems("WITH c AS (SELECT z FROM u) SELECT a, sum(b) AS s GROUP BY a")).toEqual([
      { name: "a", source: ["a"] },
      { name: "s", source: null },
    ]);
    expect(selectItems("SELECT 1 AS one UNION SELECT 2")).toEqual([{ name: "one", source: null }]);
  });
  it("commas inside calls do not split items", () => {
    expect(selectItems("SELECT concat(a, b) AS ab, coalesce(x, 0) z FROM t")).toEqual([
      { name: "ab", source: null },
      { name: "z", source: null },
    ]);
  });
});

describe("positions", () => {
  it("offsetOf is 1-based and clamps", () => {
    const text = "ab\ncde\nf";
    expect(offsetOf(text, 1, 1)).toBe(0);
    expect(offsetOf(text, 2, 2)).toBe(4);
    expect(offsetOf(text, 2, 99)).toBe(6);
    expect(offsetOf(text, 9, 1)).toBe(text.length);
  });
  it("maps a statement's line/column into the whole editor text", () => {
    const whole = "SELECT 1;\nSELECT *\nFRM t";
    const start = whole.indexOf("SELECT *");
    const sent = whole.slice(start);
    const pos = mapErrorPosition(sent, start, 2, 1);
    expect(whole.slice(pos, pos + 3)).toBe("FRM");
  });
  it("keeps the cursor on the same token through formatting", () => {
    const before = "select a,b from   t where x=1";
    const after = "select\n  a,\n  b\nfrom\n  t\nwhere\n  x = 1";
    const pos = mapCursorThroughFormat(before, after, before.indexOf("t where") + 1);
    expect(after.slice(pos - 1, pos)).toBe("t");
    expect(mapCursorThroughFormat(before, after, 0)).toBe(0);
  });
  it("oneLine flattens and truncates", () => {
    expect(oneLine("a\n  b\tc")).toBe("a b c");
    expect(oneLine("x".repeat(10), 5)).toBe("xxxx…");
  });
});

describe("indexOfCodePoint", () => {
  it("is the same index for text without astral characters", () => {
    expect(indexOfCodePoint("SELECT 1; SELECT 2", 10)).toBe(10);
  });
  it("counts a surrogate pair as one code point, as the server does", () => {
    const text = "SELECT '😀'; SELECT 2";
    // The server's offset of "SELECT 2" counts the emoji once (Python code points).
    const serverOffset = Array.from(text.slice(0, text.indexOf("SELECT 2"))).length;
    expect(text.slice(indexOfCodePoint(text, serverOffset))).toBe("SELECT 2");
  });
  it("is clamped into the text", () => {
    expect(indexOfCodePoint("ab", 10)).toBe(2);
    expect(indexOfCodePoint("", 0)).toBe(0);
  });
});
