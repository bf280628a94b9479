import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { envSchema } from './schema.ts';
import { CATALOGUE, DEFAULT_VOICE_ID, type VoiceProfile } from './voices.ts';
import { defaultEngines, type EngineInfo } from './engines.ts';

export type Role = 'api' | 'pipelines' | 'inference';

/** The typed configuration every part of the platform receives. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string | null;
  dataDir: string;
  roles: Role[];
  /** route plugins: folder names under plugins/ */
  plugins: string[];
  /** background modules: folders `inference` and `pipelines/<name>` */
  modules: string[];
  /** probes and metrics listener of every role (0: any free port) */
  opsPort: number;
  /** when set, the API port also serves /metrics to `Authorization: Bearer <token>` */
  metricsToken: string | null;
  /** SIGTERM to exit: in-flight work settles within this */
  shutdownTimeoutSeconds: number;
  /**
   * addresses and CIDR ranges of the proxies in front (TRUSTED_PROXIES):
   * X-Forwarded-For and -Proto are believed only from these
   */
  trustedProxies: string[];
  /** every setting as read (environment over CONFIG_FILE), for plugins' own config sections */
  source: Record<string, unknown>;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  kafka: { brokers: string[]; clientId: string; partitions: number } | null;
  /** how often the events the bus refused are published again (core/bus-spill.ts) */
  busSpillRelaySeconds: number;
  mongo: { url: string; db: string } | null;
  clickhouse: { url: string; database: string; user: string; password: string } | null;
  redisUrl: string | null;
  /** the inference service's instances (INFERENCE_URL); empty: the engine runs in process */
  inferenceUrls: string[];
  /** the inference role serves the internal streaming endpoint on this port when set */
  inferencePort: number | null;
  urlSigningSecret: string;
  /** sign-in of people (users, sessions, lockout, CSRF): core/identity */
  identity: {
    /** keys session CSRF tokens and the cookies of sign-in features; a fleet must share one */
    sessionSecret: string;
    sessionTtlHours: number;
    /** consecutive failed sign-ins that lock a user out, and for how long */
    maxFailures: number;
    lockoutMinutes: number;
    /** sign-in attempts per minute per client address and per e-mail */
    signInsPerMinute: number;
  };
  cloneUrl: string;
  billing: {
    globalMultiplier: number;
    aiRefineSurchargePerChar: number;
    /** cap windows are computed in this fixed offset from UTC (Vietnam: +420) */
    timezoneOffsetMinutes: number;
    /** a process silent this long is gone: its requests' held charges are refunded (core/billing/hold-recovery.ts) */
    holdLeaseSeconds: number;
  };
  engines: EngineInfo[];
  voices: VoiceProfile[];
  defaultVoiceId: string;
  limits: {
    queueMaxDepth: number;
    userQueueMax: number;
    streamCapacity: number;
    /** SPEC Limits: requests per minute per key for each route class */
    ratePerMinute: { speech: number; dialogue: number; media: number };
    /** per-key limit of the balance and usage routes */
    accountRoutesPerMinute: number;
    streamsPerGrant: number;
    /** open streams per signed-in person (AuthContext.userId) */
    streamsPerUser: number;
    /** SPEC Limits "Edge": per source address under /api/v1, and on stream routes; 0 = off */
    edge: { api: EdgeLimits; stream: EdgeLimits };
    streamHeartbeatSeconds: number;
    streamAbandonSeconds: number;
    /** syntheses of `/audio/speech` and `/agent/speech` at once, and how long one waits for a turn */
    speech: { perKey: number; perAccount: number; process: number; queueMs: number };
  };
  inference: { concurrency: number; jobMaxAttempts: number; leaseSeconds: number; retryBaseMs: number };
  moderationTerms: string[];
  webhooks: { allowLoopback: boolean; caFile: string | null; retryScale: number };
}

export interface EdgeLimits {
  requestsPerMinute: number;
  connections: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function readFileSettings(file: string | undefined): Record<string, unknown> {
  if (!file) return {};
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`CONFIG_FILE ${file} could not be read as JSON: ${(err as Error).message}`);
  }
  // Spread, an array or a number would be read as no settings at all: the process would run on defaults, silently.
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    const held = settings === null ? 'null' : Array.isArray(settings) ? 'an array' : `a ${typeof settings}`;
    throw new ConfigError(`CONFIG_FILE ${file} must hold a JSON object of settings (like {"PORT": 8080}), not ${held}`);
  }
  return settings as Record<string, unknown>;
}

/** `VOICE_MODELS=vi-north-female-mai=/models/mai,...` points catalogue voices at ONNX voice directories. */
function applyVoiceModels(voices: VoiceProfile[], spec: string): VoiceProfile[] {
  if (!spec) return voices;
  const byId = new Map<string, string>();
  for (const pair of spec.split(',')) {
    const [id, dir] = pair.split('=');
    if (!id || !dir) throw new ConfigError(`VOICE_MODELS entry "${pair}" must look like <voiceId>=<model directory>`);
    if (!voices.some((v) => v.id === id)) throw new ConfigError(`VOICE_MODELS names unknown voice "${id}"`);
    byId.set(id, dir);
  }
  return voices.map((v) => {
    const dir = byId.get(v.id);
    return dir ? { ...v, render: { backend: 'onnx', modelDir: path.resolve(dir) } } : v;
  });
}

/** Reads and validates configuration once. Throws ConfigError naming the variable and the rule. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): Config {
  const merged = { ...readFileSettings(env.CONFIG_FILE), ...env, ...overrides };
  const { value, error } = envSchema.validate(merged, { abortEarly: false, convert: true });
  if (error) {
    throw new ConfigError(`Invalid configuration: ${error.details.map((d) => d.message).join('; ')}`);
  }
  const v = value as Record<string, any>;
  const csv = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
  return {
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl: v.PUBLIC_BASE_URL ?? null,
    dataDir: path.resolve(v.DATA_DIR),
    roles: csv(v.ROLES) as Role[],
    plugins: csv(v.PLUGINS),
    modules: csv(v.MODULES),
    opsPort: v.OPS_PORT,
    metricsToken: v.METRICS_TOKEN ?? null,
    shutdownTimeoutSeconds: v.SHUTDOWN_TIMEOUT_SECONDS,
    trustedProxies: csv(v.TRUSTED_PROXIES),
    source: merged,
    logLevel: v.LOG_LEVEL,
    kafka: v.KAFKA_BROKERS ? { brokers: csv(v.KAFKA_BROKERS), clientId: v.KAFKA_CLIENT_ID, partitions: v.KAFKA_PARTITIONS } : null,
    busSpillRelaySeconds: v.BUS_SPILL_RELAY_SECONDS,
    mongo: v.MONGODB_URL ? { url: v.MONGODB_URL, db: v.MONGODB_DB } : null,
    clickhouse: v.CLICKHOUSE_URL
      ? { url: v.CLICKHOUSE_URL, database: v.CLICKHOUSE_DATABASE, user: v.CLICKHOUSE_USER, password: v.CLICKHOUSE_PASSWORD }
      : null,
    redisUrl: v.REDIS_URL ?? null,
    inferenceUrls: v.INFERENCE_URL ? csv(v.INFERENCE_URL) : [],
    inferencePort: v.INFERENCE_PORT ?? null,
    // A random secret is fine for one embedded process; a fleet must share one.
    urlSigningSecret: v.URL_SIGNING_SECRET ?? randomBytes(24).toString('hex'),
    identity: {
      sessionSecret: v.SESSION_SECRET ?? randomBytes(24).toString('hex'),
      sessionTtlHours: v.SESSION_TTL_HOURS,
      maxFailures: v.SIGNIN_MAX_FAILURES,
      lockoutMinutes: v.SIGNIN_LOCKOUT_MINUTES,
      signInsPerMinute: v.SIGNIN_PER_MINUTE,
    },
    cloneUrl: v.CLONE_URL,
    billing: {
      globalMultiplier: v.GLOBAL_MULTIPLIER,
      aiRefineSurchargePerChar: v.AI_REFINE_SURCHARGE_PER_CHAR,
      timezoneOffsetMinutes: v.BILLING_TIMEZONE_OFFSET_MINUTES,
      holdLeaseSeconds: v.CHARGE_HOLD_LEASE_SECONDS,
    },
    engines: defaultEngines(v.V4_MULTIPLIER),
    voices: applyVoiceModels(CATALOGUE, v.VOICE_MODELS),
    defaultVoiceId: DEFAULT_VOICE_ID,
    limits: {
      queueMaxDepth: v.QUEUE_MAX_DEPTH,
      userQueueMax: v.USER_QUEUE_MAX,
      streamCapacity: v.STREAM_CAPACITY,
      accountRoutesPerMinute: v.ACCOUNT_ROUTES_PER_MINUTE,
      ratePerMinute: { speech: v.RATE_SPEECH_PER_MINUTE, dialogue: v.RATE_DIALOGUE_PER_MINUTE, media: v.RATE_MEDIA_PER_MINUTE },
      streamsPerGrant: v.STREAMS_PER_GRANT,
      streamsPerUser: v.STREAMS_PER_USER,
      edge: {
        api: { requestsPerMinute: v.EDGE_REQUESTS_PER_MINUTE, connections: v.EDGE_CONNECTIONS },
        stream: { requestsPerMinute: v.EDGE_STREAM_REQUESTS_PER_MINUTE, connections: v.EDGE_STREAM_CONNECTIONS },
      },
      streamHeartbeatSeconds: v.STREAM_HEARTBEAT_SECONDS,
      streamAbandonSeconds: v.STREAM_ABANDON_SECONDS,
      speech: {
        perKey: v.SPEECH_CONCURRENCY_PER_KEY, perAccount: v.SPEECH_CONCURRENCY_PER_ACCOUNT,
        process: v.SPEECH_CONCURRENCY, queueMs: v.SPEECH_QUEUE_MS,
      },
    },
    inference: { concurrency: v.INFERENCE_CONCURRENCY, jobMaxAttempts: v.JOB_MAX_ATTEMPTS, leaseSeconds: v.JOB_LEASE_SECONDS, retryBaseMs: v.JOB_RETRY_BASE_MS },
    moderationTerms: csv(v.MODERATION_TERMS),
    webhooks: { allowLoopback: v.WEBHOOK_ALLOW_LOOPBACK, caFile: v.WEBHOOK_CA_FILE ?? null, retryScale: v.WEBHOOK_RETRY_SCALE },
  };
}
