/**
 * A list of values sent beside a query as ClickHouse "external data": a
 * temporary one-column table the query names (`WHERE job_id IN lookup_ids`),
 * uploaded as TabSeparated in a multipart form over HTTP. ClickHouse 18.16
 * parses a literal `IN ('…', '…')` list one AST node per value: 10,000 job
 * ids cost it about 120 ms of CPU, as TabSeparated about 4. Current releases
 * take the same request.
 *
 * Sent with fetch, not @clickhouse/client, whose `exec` puts the query in the
 * URL beside a body: 18.16 answered a 23 KB URL with an empty 400, and a
 * look-up naming a batch's accounts is longer. In a form the query is a field
 * like the table. (Sent through `exec` in chunks, about 1 request in 100 that
 * followed a form on the same kept-alive socket failed with an empty error;
 * fetch sends the form with its length.)
 */
export interface ExternalTable {
  /** the name the query uses; letters, digits and underscores */
  name: string;
  column: string;
  type: 'String' | 'UInt64';
  values: Iterable<string | bigint>;
}

/** A SELECT and the tables it reads beside it. */
export interface ExternalQuery {
  query: string;
  tables: readonly ExternalTable[];
}

export interface ClickHouseEndpoint {
  url: string;
  user: string;
  password: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** As @clickhouse/client's default request timeout. */
const REQUEST_TIMEOUT_MS = 180_000;

// TabSeparated's escapes: a value holds no raw tab, newline or backslash; \r and NUL escaped too, so nothing ends a row early.
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const NEEDS_ESCAPE = /[\\\t\n\r\0]/g;

export function tsvField(value: string | bigint): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'string') throw new TypeError(`tsvField expects a string or bigint, got ${typeof value}`);
  return value.replace(NEEDS_ESCAPE, (ch) => TSV_ESCAPES[ch]!);
}

/** The form: the query and each table's rows; and the URL parameters that describe the tables to the server. */
export function externalTableForm(query: string, tables: readonly ExternalTable[]): { form: FormData; params: Record<string, string> } {
  const form = new FormData();
  const params: Record<string, string> = {};
  form.append('query', query);
  for (const table of tables) {
    if (!NAME.test(table.name) || !NAME.test(table.column)) throw new TypeError(`external table: bad name ${table.name}.${table.column}`);
    if (form.has(table.name)) throw new TypeError(`external table: ${table.name} given twice`);
    let rows = '';
    for (const value of table.values) rows += `${tsvField(value)}\n`;
    form.append(table.name, new Blob([rows], { type: 'text/tab-separated-values' }), `${table.name}.tsv`);
    params[`${table.name}_structure`] = `${table.column} ${table.type}`;
    params[`${table.name}_format`] = 'TabSeparated';
  }
  return { form, params };
}

/** Runs a SELECT that reads `tables` beside it; answers its rows. `settings` go as URL parameters. */
export async function selectWithExternal(
  endpoint: ClickHouseEndpoint, query: string, tables: readonly ExternalTable[], settings: Record<string, string> = {},
): Promise<Record<string, unknown>[]> {
  const { form, params } = externalTableForm(`${query} FORMAT JSONEachRow`, tables);
  const url = new URL(endpoint.url);
  for (const [name, value] of Object.entries({ ...settings, ...params })) url.searchParams.set(name, value);
  const response = await fetch(url, {
    method: 'POST',
    body: form,
    headers: { Authorization: `Basic ${Buffer.from(`${endpoint.user}:${endpoint.password}`).toString('base64')}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`ClickHouse answered ${response.status}: ${text.trim() || '(no message)'}`);
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}
