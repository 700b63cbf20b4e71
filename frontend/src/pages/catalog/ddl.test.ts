import { describe, expect, it } from "vitest";
import { functionDdl, sqlString, viewDdl } from "./ddl";

describe("sqlString", () => {
  it("escapes quotes and backslashes so the text stays one literal", () => {
    expect(sqlString("it's")).toBe("'it\\'s'");
    expect(sqlString("a\\' OR 1=1 --")).toBe("'a\\\\\\' OR 1=1 --'");
  });
});

describe("viewDdl", () => {
  it("quotes the name, adds the comment and drops a trailing semicolon", () => {
    expect(
      viewDdl({ catalog: "demo", database: "sales", name: "big orders", comment: "o'k", query: "SELECT 1 AS one;\n" }),
    ).toBe("CREATE VIEW demo.sales.`big orders`\nCOMMENT 'o\\'k'\nAS SELECT 1 AS one");
  });
  it("leaves the comment out when empty", () => {
    expect(viewDdl({ catalog: "c", database: "d", name: "v", comment: " ", query: "SELECT 2" })).toBe(
      "CREATE VIEW c.d.v\nAS SELECT 2",
    );
  });
});

describe("functionDdl", () => {
  it("writes a SQL function with its signature", () => {
    expect(
      functionDdl({
        catalog: "c",
        database: "d",
        name: "add_vat",
        comment: "",
        language: "sql",
        parameters: [
          { name: "price", type: "DECIMAL(10,2)" },
          { name: "", type: "" },
        ],
        returns: "DECIMAL(12,2)",
        body: "price * 1.2",
      }),
    ).toBe("CREATE FUNCTION c.d.add_vat(price DECIMAL(10,2))\nRETURNS DECIMAL(12,2)\nRETURN price * 1.2");
  });
  it("writes a Python function as a quoted dotted name", () => {
    expect(
      functionDdl({
        catalog: "c",
        database: "d",
        name: "up",
        comment: "",
        language: "python",
        parameters: [],
        returns: "",
        body: " tessera_udfs.text.slugify ",
      }),
    ).toBe("CREATE FUNCTION c.d.up AS 'tessera_udfs.text.slugify' LANGUAGE PYTHON");
  });
});
