/**
 * Daily cells of the embedded usage store: per account, key, UTC day,
 * route, voice, error code and status, the sums a `/usage` report adds up,
 * and per account, key and day how many rows had each generation time (the
 * p95 is read from those counts). Kept exact in the same transaction as the
 * rows they count: a new outcome row adds its contribution; a new job close
 * takes back the contribution of the queued row it closes and adds it again
 * as the latest close now makes it (both computed by effectiveRows, the
 * query's own definition), so a close that comes early, late, twice or out
 * of order leaves the cells as the raw rows would count them.
 */
import type { EmbeddedDb } from '../embedded-db.ts';
import { DAY_MS } from './report.ts';
import { effectiveRows } from './sqlite-usage-sql.ts';

export const CELLS_SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_daily (
  account_id TEXT NOT NULL, key_id TEXT NOT NULL, day INTEGER NOT NULL, route TEXT NOT NULL, voice TEXT NOT NULL,
  error_code TEXT NOT NULL, status INTEGER NOT NULL,
  requests INTEGER NOT NULL, ok INTEGER NOT NULL, queued INTEGER NOT NULL, cache_hit INTEGER NOT NULL,
  denied INTEGER NOT NULL, error INTEGER NOT NULL, token_cost REAL NOT NULL, characters INTEGER NOT NULL,
  audio_seconds REAL NOT NULL, gen_count INTEGER NOT NULL, gen_sum REAL NOT NULL, last_at_ms INTEGER NOT NULL,
  voice_name TEXT, engine TEXT,
  PRIMARY KEY (account_id, key_id, day, route, voice, error_code, status)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_gen_daily (
  account_id TEXT NOT NULL, key_id TEXT NOT NULL, day INTEGER NOT NULL, gen_ms REAL NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (account_id, key_id, day, gen_ms)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS usage_events_job ON usage_events (job_id) WHERE job_id IS NOT NULL;
`;

const CELL_KEY = 'account_id, key_id, day, route, voice, error_code, status';
const BY_IDS = `e.id IN (SELECT value FROM json_each(@ids))`;
const BY_JOBS = `e.result = 'queued' AND e.job_id IN (SELECT value FROM json_each(@jobIds))`;

/** Adds (@sign 1) or takes back (-1) what the rows matching `where` count. A take-back leaves last times as they were (see refreshCell). */
const addCells = (where: string) => `
INSERT INTO usage_daily (${CELL_KEY}, requests, ok, queued, cache_hit, denied, error, token_cost, characters,
  audio_seconds, gen_count, gen_sum, last_at_ms, voice_name, engine)
SELECT account_id, key_id, at_ms / ${DAY_MS}, route, voice, error_code, status,
  @sign * COUNT(*), @sign * TOTAL(result = 'ok'), @sign * TOTAL(result = 'queued'), @sign * TOTAL(result = 'cache_hit'),
  @sign * TOTAL(result = 'denied'), @sign * TOTAL(result = 'error'), @sign * TOTAL(tokens_charged), @sign * TOTAL(characters),
  @sign * TOTAL(audio_seconds), @sign * COUNT(gen_ms), @sign * TOTAL(gen_ms),
  CASE WHEN @sign > 0 THEN MAX(at_ms) ELSE 0 END, MAX(voice_name), MAX(engine)
FROM (${effectiveRows(where)}) WHERE account_id IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (${CELL_KEY}) DO UPDATE SET
  requests = requests + excluded.requests, ok = ok + excluded.ok, queued = queued + excluded.queued,
  cache_hit = cache_hit + excluded.cache_hit, denied = denied + excluded.denied, error = error + excluded.error,
  token_cost = token_cost + excluded.token_cost, characters = characters + excluded.characters,
  audio_seconds = audio_seconds + excluded.audio_seconds, gen_count = gen_count + excluded.gen_count,
  gen_sum = gen_sum + excluded.gen_sum, last_at_ms = MAX(last_at_ms, excluded.last_at_ms),
  voice_name = COALESCE(MAX(voice_name, excluded.voice_name), voice_name, excluded.voice_name),
  engine = COALESCE(MAX(engine, excluded.engine), engine, excluded.engine)`;

const addGens = (where: string) => `
INSERT INTO usage_gen_daily (account_id, key_id, day, gen_ms, n)
SELECT account_id, key_id, at_ms / ${DAY_MS}, gen_ms, @sign * COUNT(*)
FROM (${effectiveRows(where)}) WHERE account_id IS NOT NULL AND gen_ms IS NOT NULL
GROUP BY 1, 2, 3, 4
ON CONFLICT (account_id, key_id, day, gen_ms) DO UPDATE SET n = n + excluded.n`;

export interface CellUpkeep {
  /** after new outcome rows were inserted, in the same transaction */
  outcomesAdded(ids: string[]): void;
  /** runs `insert` (the new closes of these jobs) between taking back and adding again what their queued rows count */
  closing(jobIds: string[], insert: () => void): void;
}

interface Cell {
  account_id: string; key_id: string; day: number; route: string; voice: string; error_code: string; status: number;
}

export function createCellUpkeep(db: EmbeddedDb): CellUpkeep {
  db.exec(CELLS_SCHEMA);
  const cellsByIds = db.prepare(addCells(BY_IDS));
  const gensByIds = db.prepare(addGens(BY_IDS));
  const cellsByJobs = db.prepare(addCells(BY_JOBS));
  const gensByJobs = db.prepare(addGens(BY_JOBS));
  const touched = db.prepare(`SELECT DISTINCT account_id, key_id, at_ms / ${DAY_MS} AS day, route, voice, error_code, status
    FROM (${effectiveRows(BY_JOBS)}) WHERE account_id IS NOT NULL`);
  const cellKeyWhere = CELL_KEY.split(', ').map((c) => `${c} = @${c}`).join(' AND ');
  const dropEmpty = db.prepare(`DELETE FROM usage_daily WHERE ${cellKeyWhere} AND requests = 0`);
  // A row that moved out of an error cell may have been its latest: read the cell's last time again from its rows.
  const refreshLastAt = db.prepare(`UPDATE usage_daily SET last_at_ms = COALESCE((
      SELECT MAX(at_ms) FROM (${effectiveRows(`e.account_id = @account_id AND e.at_ms >= @day * ${DAY_MS} AND e.at_ms < (@day + 1) * ${DAY_MS}`)})
      WHERE key_id = @key_id AND route = @route AND voice = @voice AND error_code = @error_code AND status = @status), 0)
    WHERE ${cellKeyWhere}`);

  rebuildIfUnbuilt(db);
  return {
    outcomesAdded(ids) {
      if (ids.length === 0) return;
      const params = { ids: JSON.stringify(ids), sign: 1 };
      cellsByIds.run(params);
      gensByIds.run(params);
    },
    closing(jobIds, insert) {
      if (jobIds.length === 0) return insert();
      const params = { jobIds: JSON.stringify(jobIds) };
      const before = touched.all(params) as Cell[];
      cellsByJobs.run({ ...params, sign: -1 });
      gensByJobs.run({ ...params, sign: -1 });
      insert();
      cellsByJobs.run({ ...params, sign: 1 });
      gensByJobs.run({ ...params, sign: 1 });
      for (const cell of before) {
        if (dropEmpty.run(cell).changes === 0 && cell.error_code !== '') refreshLastAt.run(cell);
      }
    },
  };
}

const BUILT = 'daily_cells_v1';

/** Builds the cells from the raw rows once (a file written before they existed); later writes keep them. */
function rebuildIfUnbuilt(db: EmbeddedDb): void {
  db.transaction(() => {
    if (db.prepare('SELECT 1 FROM usage_meta WHERE name = ?').get(BUILT)) return;
    rebuildCells(db);
    db.prepare('INSERT INTO usage_meta (name, value) VALUES (?, ?)').run(BUILT, new Date().toISOString());
  }).immediate();
}

/** Recounts every cell from the raw rows (also for tools that wrote rows straight into usage_events). */
export function rebuildCells(db: EmbeddedDb): void {
  db.exec(CELLS_SCHEMA);
  db.transaction(() => {
    db.exec('DELETE FROM usage_daily; DELETE FROM usage_gen_daily;');
    db.prepare(addCells('1')).run({ sign: 1 });
    db.prepare(addGens('1')).run({ sign: 1 });
  })();
}
