// The job page's view of an EXPLAIN job: Spark's plan as trees of operators, with the
// estimated sizes and row counts of EXPLAIN COST, next to its text.
import { useQuery } from "@tanstack/react-query";
import { enc, get, type Job, type ResultPage } from "../../api";
import { orderedSections, parseExplain, type PlanNode } from "./plan";

function PlanTree({ node }: { node: PlanNode }) {
  return (
    <li>
      <span className="plan-node">
        <strong className="plan-op">{node.operator}</strong>
        {node.sizeInBytes ? <span className="badge info" title="Estimated size">{node.sizeInBytes}</span> : null}
        {node.rowCount ? <span className="badge" title="Estimated rows">{node.rowCount} rows</span> : null}
        {node.detail ? (
          <span className="muted mono plan-detail" title={node.detail}>
            {node.detail}
          </span>
        ) : null}
      </span>
      {node.children.length ? (
        <ul>
          {node.children.map((child, index) => (
            <PlanTree key={index} node={child} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

export function PlanView({ job }: { job: Job }) {
  const path = `/jobs/${enc(job.id)}/result?page_size=10`;
  const result = useQuery({
    queryKey: ["jobs", path],
    queryFn: ({ signal }) => get<ResultPage>(path, { signal }),
    staleTime: Infinity,
  });
  if (!result.data) return null;
  const text = result.data.rows.map((row) => String(row[0] ?? "")).join("\n");
  const sections = orderedSections(parseExplain(text));
  if (!sections.length) return null;
  const estimated = sections.some((s) => JSON.stringify(s.roots).includes('"sizeInBytes":"'));
  return (
    <section aria-labelledby="job-plan-heading" data-testid="job-plan">
      <h2 id="job-plan-heading">Plan</h2>
      {estimated ? null : (
        <p className="muted">Run EXPLAIN COST to see Spark's estimated sizes and row counts.</p>
      )}
      {sections.map((section) => (
        <div key={section.title} className="plan-section">
          <h3>{section.title}</h3>
          <ul className="plan-tree">
            {section.roots.map((root, index) => (
              <PlanTree key={index} node={root} />
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
