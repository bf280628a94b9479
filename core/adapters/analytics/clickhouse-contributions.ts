import { sqlIdentifier, sqlNumber } from './clickhouse-sql.ts';
import type { ExternalQuery, ExternalTable } from './clickhouse-external.ts';
import { closedVersion, EVENT_ROW_TYPES, type CloseRow, type EventRow } from './clickhouse-schema.ts';
import type { RowBinaryColumns } from './clickhouse-rowbinary.ts';
import { AGG_TABLES, FIX_ROW_TYPES } from './clickhouse-aggregates.ts';

/**
 * Contributions to the daily aggregates (see clickhouse-aggregates.ts): a
 * signed usage row named by a tid that is the same whoever writes it and
 * however often, so that a second copy can be recognised and subtracted.
 */
export interface Contribution {
  row: EventRow;
  tid: string;
  sign: 1 | -1;
}

/** What the Null table's DEFAULT gives an outcome row inserted without a tid. */
export const outcomeTid = (id: string): string => `o:${id}`;

/** Row id and close id, length-prefixed (in bytes, as ClickHouse's length()) so that no two pairs give the same text. */
const pairKey = (rowId: string, closeId: string) => `${Buffer.byteLength(rowId, 'utf8')}:${rowId}:${closeId}`;

/** Closes compare by time, then by id (bytewise, as ClickHouse compares strings): the greatest is the one that counts. */
export function compareCloses(a: CloseRow, b: CloseRow): number {
  return a.at_ms - b.at_ms || Buffer.compare(Buffer.from(a.id, 'utf8'), Buffer.from(b.id, 'utf8'));
}

export function latestClose(closes: readonly CloseRow[]): CloseRow | undefined {
  return closes.reduce<CloseRow | undefined>((best, close) => (best === undefined || compareCloses(close, best) > 0 ? close : best), undefined);
}

/**
 * Moves a queued row (counted once as `o:<id>`) to its latest close. Each
 * close c adds `closed(c) - queued` (a+/a-); each close that is not the
 * latest takes it back again (r+/r-). The sum is `closed(latest)` whatever
 * earlier writers saw, since a pair written twice is a duplicate tid.
 */
export function closeContributions(queued: EventRow, closes: readonly CloseRow[]): Contribution[] {
  const latest = latestClose(closes);
  const out: Contribution[] = [];
  for (const close of closes) {
    const closed = closedVersion(queued, close);
    const key = pairKey(queued.id, close.id);
    out.push({ row: closed, tid: `a+:${key}`, sign: 1 }, { row: queued, tid: `a-:${key}`, sign: -1 });
    if (close !== latest) out.push({ row: queued, tid: `r+:${key}`, sign: 1 }, { row: closed, tid: `r-:${key}`, sign: -1 });
  }
  return out;
}

/** usage_agg_input columns of a contribution insert: the whole usage row, its tid and its sign. */
export const CONTRIBUTION_COLUMNS: RowBinaryColumns<Contribution> = [
  ...EVENT_ROW_TYPES.map(([name, type]) => [name, type, (c: Contribution) => c.row[name]] as const),
  ['tid', 'String', (c: Contribution) => c.tid],
  ['sign', 'Int8', (c: Contribution) => c.sign],
];

export interface Fix {
  contribution: Contribution;
  copies: number;
}

export const FIX_COLUMNS: RowBinaryColumns<Fix> = FIX_ROW_TYPES.map(([name, type]) => [name, type, (fix: Fix) => {
  if (name === 'tid') return fix.contribution.tid;
  if (name === 'sign') return fix.contribution.sign;
  if (name === 'copies') return fix.copies;
  return fix.contribution.row[name as keyof EventRow];
}] as const);

/** Most milliseconds between two event times that one range still covers. */
const RANGE_GAP_MS = 60_000;
/** Most accounts named in one look-up; past that it reads every account's rows of the time ranges. */
const MAX_ACCOUNTS = 10_000;

/** Where the copies of a batch's contributions can be: their accounts, and their times grouped into a few ranges. */
export interface Whereabouts {
  accounts: string[] | null;
  ranges: Array<[number, number]>;
}

/**
 * A batch is mostly recent events of the accounts of its bus partitions
 * (keyed by account), with the odd straggler: the look-up of its tids reads
 * only those accounts' stretches of usage_agg_ids around those times.
 */
export function whereabouts(rows: Iterable<{ account: string; at: number }>, gapMs = RANGE_GAP_MS): Whereabouts {
  const accounts = new Set<string>();
  const times: number[] = [];
  for (const { account, at } of rows) {
    accounts.add(account);
    times.push(at);
  }
  return { accounts: accounts.size <= MAX_ACCOUNTS ? [...accounts] : null, ranges: timeRanges(times, gapMs) };
}

export function timeRanges(times: readonly number[], gapMs = RANGE_GAP_MS): Array<[number, number]> {
  const sorted = Float64Array.from(times).sort();
  const ranges: Array<[number, number]> = [];
  for (const t of sorted) {
    const last = ranges[ranges.length - 1];
    if (last && t - last[1] <= gapMs) last[1] = t;
    else ranges.push([t, t]);
  }
  return ranges;
}

/** The accounts of these whereabouts as the external table `lookup_accounts` (clickhouse-external.ts), which `within` reads. */
function accountsTables({ accounts }: Whereabouts): ExternalTable[] {
  return accounts ? [{ name: 'lookup_accounts', column: 'account_id', type: 'String', values: accounts }] : [];
}

function within({ accounts, ranges }: Whereabouts): string {
  const times = ranges.map(([a, b]) => `(at_ms >= ${sqlNumber(a)} AND at_ms <= ${sqlNumber(b)})`).join(' OR ');
  return accounts ? `account_id IN lookup_accounts AND (${times})` : `(${times})`;
}
const ids = (database: string) => `${sqlIdentifier(database)}.${sqlIdentifier(AGG_TABLES.ids)}`;

/** Hashes of tids written more than once in these places: a cheap first pass (a collision only costs the second). */
export function repeatedHashesLookup(database: string, where: Whereabouts): ExternalQuery {
  return {
    query: `SELECT toString(tid_hash) AS d_hash FROM ${ids(database)} WHERE ${within(where)} GROUP BY tid_hash HAVING count() > 1`,
    tables: accountsTables(where),
  };
}

/** Tids written more than once among those with these hashes, with their copy count. */
export function duplicateTidsLookup(database: string, where: Whereabouts, hashes: readonly bigint[]): ExternalQuery {
  return {
    query: `SELECT tid AS d_tid, count() AS d_copies FROM ${ids(database)}
    WHERE ${within(where)} AND tid_hash IN lookup_hashes GROUP BY tid HAVING d_copies > 1`,
    tables: [...accountsTables(where), { name: 'lookup_hashes', column: 'tid_hash', type: 'UInt64', values: hashes }],
  };
}
