/**
 * Analytics port: usage events and the `GET /usage` aggregates.
 * Adapters: core/adapters/analytics/sqlite.ts (embedded) and
 * core/adapters/analytics/clickhouse.ts (production).
 */

/** One API request outcome, as published on `request.outcomes`. */
export interface OutcomeEvent {
  id: string;
  at: string;
  requestId: string;
  accountId: string | null;
  keyId: string | null;
  grantId: string | null;
  /** logical route name of SPEC (`tts`, `tts_stream`, `audio_speech`, ...) */
  route: string;
  status: number;
  /** `ok`, `queued`, `cache_hit`, `denied`, `error` */
  result: 'ok' | 'queued' | 'cache_hit' | 'denied' | 'error';
  tokensCharged: number;
  tokensRefunded: number;
  characters: number;
  audioSeconds: number;
  genMs: number | null;
  voice: string | null;
  voiceName: string | null;
  engine: string | null;
  errorCode: string | null;
  cacheHit: boolean;
  queued: boolean;
  /** job id for rows that close later (`tts` queued rows) */
  jobId: string | null;
}

/** Closes a `queued` row of `POST /tts` once the job finishes. */
export interface JobCloseEvent {
  id: string;
  at: string;
  jobId: string;
  result: 'ok' | 'error';
  audioSeconds: number;
  genMs: number | null;
  tokensRefunded: number;
  errorCode: string | null;
}

export interface UsageQuery {
  scope: 'key' | 'account';
  accountId: string;
  keyId: string | null;
  from: Date;
  to: Date;
}

export interface UsageTotals {
  requests: number;
  ok: number;
  queued: number;
  cacheHit: number;
  denied: number;
  error: number;
  tokenCost: number;
  characters: number;
  audioSeconds: number;
  avgGenMs: number | null;
  p95GenMs: number | null;
}

export interface UsageReport {
  totals: UsageTotals;
  byDay: Array<{ day: string; requests: number; ok: number; denied: number; error: number; tokenCost: number; characters: number; audioSeconds: number; avgGenMs: number | null }>;
  byRoute: Array<{ route: string; requests: number; ok: number; denied: number; error: number; tokenCost: number; avgGenMs: number | null }>;
  byVoice: Array<{ voice: string; voiceName: string | null; engine: string | null; requests: number; tokenCost: number; audioSeconds: number; avgGenMs: number | null; errors: number }>;
  byErrorCode: Array<{ errorCode: string; statusCode: number; count: number; lastAt: string }>;
}

export interface Analytics {
  /** idempotent on event id */
  recordOutcomes(events: OutcomeEvent[]): Promise<void>;
  /** idempotent on event id */
  recordJobCloses(events: JobCloseEvent[]): Promise<void>;
  usage(query: UsageQuery): Promise<UsageReport>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
