import { describe, expect, it } from "vitest";
import { orderedSections, parseExplain } from "./plan";

const COST = `== Optimized Logical Plan ==
Aggregate [customer_id#1L], [customer_id#1L, sum(total#2) AS revenue#3], Statistics(sizeInBytes=1.5 KiB, rowCount=20)
+- Project [customer_id#1L, total#2], Statistics(sizeInBytes=4.0 MiB)
   +- Relation demo.sales.orders[id#0L,customer_id#1L,total#2] parquet, Statistics(sizeInBytes=8.0 MiB)

== Physical Plan ==
AdaptiveSparkPlan isFinalPlan=false
+- HashAggregate(keys=[customer_id#1L], functions=[sum(total#2)])
   +- Exchange hashpartitioning(customer_id#1L, 200), ENSURE_REQUIREMENTS, [plan_id=10]
      +- *(1) HashAggregate(keys=[customer_id#1L], functions=[partial_sum(total#2)])
         +- FileScan parquet [customer_id#1L,total#2] Batched: true
`;

describe("parseExplain", () => {
  it("reads each section as a tree with operators and estimates", () => {
    const sections = parseExplain(COST);
    expect(sections.map((s) => s.title)).toEqual(["Optimized Logical Plan", "Physical Plan"]);
    const logical = sections[0].roots[0];
    expect(logical.operator).toBe("Aggregate");
    expect(logical.sizeInBytes).toBe("1.5 KiB");
    expect(logical.rowCount).toBe("20");
    expect(logical.children[0].operator).toBe("Project");
    expect(logical.children[0].children[0].operator).toBe("Relation");
    expect(logical.children[0].children[0].sizeInBytes).toBe("8.0 MiB");
    expect(logical.children[0].children[0].detail).not.toContain("Statistics");

    const physical = sections[1].roots[0];
    const path: string[] = [];
    for (let n = physical; n; n = n.children[0]) path.push(n.operator);
    expect(path).toEqual(["AdaptiveSparkPlan", "HashAggregate", "Exchange", "HashAggregate", "FileScan"]);
    expect(orderedSections(sections)[0].title).toBe("Physical Plan");
  });

  it("puts both sides of a join under it", () => {
    const text = `== Physical Plan ==
*(3) BroadcastHashJoin [id#0L], [id#5L], Inner, BuildRight
:- *(3) Filter isnotnull(id#0L)
:  +- *(3) Range (0, 10, step=1, splits=2)
+- BroadcastExchange HashedRelationBroadcastMode
   +- *(2) Range (0, 5, step=1, splits=2)
`;
    const [join] = parseExplain(text)[0].roots;
    expect(join.operator).toBe("BroadcastHashJoin");
    expect(join.children.map((c) => c.operator)).toEqual(["Filter", "BroadcastExchange"]);
    expect(join.children[0].children[0].operator).toBe("Range");
    expect(join.children[1].children[0].operator).toBe("Range");
  });

  it("stops at FORMATTED mode's details and reads plain text as one plan", () => {
    const formatted = `== Physical Plan ==
* Project (2)
+- * Range (1)


(1) Range [codegen id : 1]
Output [1]: [id#0L]
`;
    const [section] = parseExplain(formatted);
    expect(section.roots).toHaveLength(1);
    expect(section.roots[0].children).toHaveLength(1);
    expect(section.roots[0].operator).toBe("Project");
    expect(parseExplain("Project [a]\n+- Range (0, 1)")[0].title).toBe("Plan");
    expect(parseExplain("")).toEqual([]);
  });
});
