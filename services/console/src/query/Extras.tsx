// What a query answers besides rows: facets and suggestions (select facet(…) / suggest(…)) shown as such,
// the timings of `include timings()` as a bar chart (plain SVG, as the usage charts), the plan of
// `include explanations()` as a tree. The export of every result is ExportResults.tsx.
import type { ReactElement } from 'react';
import { z } from 'zod';

const FacetsSchema = z
  .array(z.object({ Name: z.string(), Values: z.array(z.object({ Range: z.string(), Count: z.number() })) }))
  .min(1);
const SuggestionsSchema = z.array(z.object({ Name: z.string(), Suggestions: z.array(z.string()) })).min(1);

export interface PlanNode {
  Operation: string;
  Details?: string;
  Children?: PlanNode[];
}
export const PlanSchema: z.ZodType<PlanNode> = z.lazy(() =>
  z.looseObject({
    Operation: z.string(),
    Details: z.string().optional(),
    Children: z.array(PlanSchema).optional(),
  }),
);

/**
 * The results as facets or suggestions when the query selected them (its text says so and the rows have
 * their shape); null when they are plain rows.
 */
export function specialResultsOf(query: string, results: unknown[]): ReactElement | null {
  if (/\bselect\s+facet\s*\(/i.test(query)) {
    const facets = FacetsSchema.safeParse(results);
    if (facets.success) {
      return (
        <>
          {facets.data.map((facet) => (
            <table key={facet.Name} className="facet">
              <caption>Facet {facet.Name}</caption>
              <thead>
                <tr>
                  <th scope="col">Value</th>
                  <th scope="col">Count</th>
                </tr>
              </thead>
              <tbody>
                {facet.Values.map((value) => (
                  <tr key={value.Range}>
                    <th scope="row">{value.Range}</th>
                    <td>{value.Count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </>
      );
    }
  }
  if (/\bselect\s+suggest\s*\(/i.test(query)) {
    const suggestions = SuggestionsSchema.safeParse(results);
    if (suggestions.success) {
      return (
        <>
          {suggestions.data.map((field) => (
            <section key={field.Name} aria-label={`Suggestions for ${field.Name}`}>
              <h3>Did you mean, in {field.Name}:</h3>
              {field.Suggestions.length === 0 ? (
                <p>No suggestion.</p>
              ) : (
                <ul>
                  {field.Suggestions.map((term) => (
                    <li key={term}>{term}</li>
                  ))}
                </ul>
              )}
            </section>
          ))}
        </>
      );
    }
  }
  return null;
}

const BAR_HEIGHT = 22;

export function TimingsChart({ timings }: { timings: Record<string, number> }) {
  const entries = Object.entries(timings);
  const top = Math.max(1, ...entries.map(([, ms]) => ms));
  const summary = entries.map(([name, ms]) => `${name} ${ms} ms`).join(', ');
  return (
    <figure className="chart">
      <figcaption>Timings: {summary}</figcaption>
      <svg
        viewBox={`0 0 600 ${entries.length * BAR_HEIGHT}`}
        role="img"
        aria-label={`Timings: ${summary}`}
        className="timings"
      >
        {entries.map(([name, ms], i) => (
          <g key={name} transform={`translate(0 ${i * BAR_HEIGHT})`}>
            <text x="0" y="15" fontSize="13" fill="#1a1a1a">
              {name}
            </text>
            <rect x="160" y="3" height="16" width={Math.max(1, (ms / top) * 380)} fill="#0b5394" />
            <text x={166 + (ms / top) * 380} y="15" fontSize="13" fill="#1a1a1a">
              {ms} ms
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}

export function PlanTree({ plan }: { plan: PlanNode }) {
  return (
    <figure>
      <figcaption>Plan</figcaption>
      <ul className="plan" aria-label="Query plan">
        <PlanItem node={plan} />
      </ul>
    </figure>
  );
}

function PlanItem({ node }: { node: PlanNode }) {
  return (
    <li>
      <strong>{node.Operation}</strong>
      {node.Details ? ` — ${node.Details}` : ''}
      {node.Children && node.Children.length > 0 && (
        <ul>
          {node.Children.map((child, i) => (
            // Plan nodes have no identity of their own; their place in the tree is it.
            // biome-ignore lint/suspicious/noArrayIndexKey: the order is the plan's
            <PlanItem key={i} node={child} />
          ))}
        </ul>
      )}
    </li>
  );
}
