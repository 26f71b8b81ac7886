// Export of a query's results through the stream API (POST …/streams/queries, docs/live-data.md): every
// matching row, not one page, as NDJSON or CSV. The stream's last line says whether it is whole:
// {"@end": …} (complete), {"@error": …} (failed after its headers) or neither (cut short).
import { z } from 'zod';
import { databasePath, openStream } from '../api.js';

const EndSchema = z.object({ '@end': z.looseObject({ Count: z.number() }) });
const FailedSchema = z.object({ '@error': z.looseObject({ code: z.string(), detail: z.string() }) });

export class ExportError extends Error {}

/** The stream's rows, checked whole: a failed or cut stream throws ExportError. */
export async function streamRows(
  database: string,
  query: string,
  parameters: Record<string, unknown>,
): Promise<unknown[]> {
  const response = await openStream('POST', databasePath(database, 'streams/queries'), {
    Query: query,
    QueryParameters: parameters,
  });
  const lines = (await response.text()).split('\n').filter((line) => line.trim() !== '');
  const rows = lines.map((line) => JSON.parse(line) as unknown);
  const last = rows.pop();
  const failed = FailedSchema.safeParse(last);
  if (failed.success) {
    const { code, detail } = failed.data['@error'];
    throw new ExportError(`${code}: ${detail}`);
  }
  const end = EndSchema.safeParse(last);
  if (!end.success) throw new ExportError('The stream was cut short before its end line: export again.');
  if (end.data['@end'].Count !== rows.length) {
    throw new ExportError(`The stream announced ${end.data['@end'].Count} rows and sent ${rows.length}.`);
  }
  return rows;
}

export function toNdjson(rows: unknown[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}

/**
 * CSV (RFC 4180): a column per top-level field of any row, in the order they first appear, `@metadata`
 * left out; text as it is, other values as JSON; every cell quoted.
 */
export function toCsv(rows: unknown[]): string {
  const columns: string[] = [];
  const seen = new Set<string>();
  const objects = rows.map((row) => (typeof row === 'object' && row !== null ? row : { value: row }));
  for (const row of objects) {
    for (const key of Object.keys(row)) {
      if (key !== '@metadata' && !seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const cell = (value: unknown) => {
    const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    return `"${text.replaceAll('"', '""')}"`;
  };
  const lines = [columns.map(cell).join(',')];
  for (const row of objects) {
    lines.push(columns.map((column) => cell((row as Record<string, unknown>)[column])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
