import Joi from 'joi';
import ipaddr from 'ipaddr.js';

/** Names proxy-addr understands besides addresses and CIDR ranges. */
const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

/** A comma-separated list of addresses, CIDR ranges (`10.0.0.0/8`) and the presets above. */
const proxyList = Joi.string().allow('').default('').custom((value: string, helpers) => {
  for (const entry of value.split(',').map((e) => e.trim()).filter(Boolean)) {
    if (PROXY_PRESETS.includes(entry)) continue;
    const valid = entry.includes('/') ? (() => {
      try {
        ipaddr.parseCIDR(entry);
        return true;
      } catch {
        return false;
      }
    })() : ipaddr.isValid(entry);
    if (!valid) return helpers.message({ custom: `"TRUSTED_PROXIES" entry "${entry}" is not an address, a CIDR range or one of ${PROXY_PRESETS.join(', ')}` });
  }
  return value;
});

/** A host name (letters, digits, `-`, `_`, dot-separated labels) or a dotted IPv4 address. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

/** What is wrong with one KAFKA_BROKERS entry, or null. */
function brokerProblem(entry: string): string | null {
  if (entry === '') return 'is empty';
  // kafkajs 2.2 splits a seed broker at its first colon (connectionPoolBuilder), so no IPv6 literal reaches the broker.
  const last = entry.lastIndexOf(':');
  if (entry.startsWith('[') || ipaddr.IPv6.isValid(entry) || (last > 0 && ipaddr.IPv6.isValid(entry.slice(0, last)))) {
    return 'is an IPv6 address, which kafkajs cannot take as a broker (it splits host:port at the first colon): give a host name that resolves to it';
  }
  const colon = entry.indexOf(':');
  if (colon < 0) return 'has no port';
  if (colon !== last) return 'is not host:port (no scheme, one colon)';
  const host = entry.slice(0, colon);
  const port = entry.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return `has port "${port}", not a number from 1 to 65535`;
  const valid = /^[\d.]+$/.test(host) ? ipaddr.IPv4.isValidFourPartDecimal(host) : HOST_NAME.test(host);
  return valid ? null : `has host "${host}", neither a host name nor an IPv4 address`;
}

/** Kafka's seed brokers: `host:port`, comma-separated. */
const brokerList = Joi.string().custom((value: string, helpers) => {
  const entries = value.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const problem = brokerProblem(entry);
    if (problem) {
      return helpers.message({ custom: `"KAFKA_BROKERS" entry "${entry}" ${problem}; KAFKA_BROKERS must be a comma-separated list of host:port (a host name or IPv4 address, port 1-65535)` });
    }
  }
  return entries.join(',');
});

/**
 * Every setting the platform reads, validated once at start-up. Values come
 * from the environment and, when `CONFIG_FILE` names a JSON file, from that
 * file (environment wins). Nothing outside config/ reads process.env.
 */
export const envSchema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  HOST: Joi.string().default('0.0.0.0'),
  PUBLIC_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  DATA_DIR: Joi.string().default('./data'),
  ROLES: Joi.string()
    .pattern(/^(api|pipelines|inference)(,(api|pipelines|inference))*$/)
    .default('api,pipelines,inference')
    .messages({ 'string.pattern.base': '"ROLES" must be a comma-separated list of api, pipelines, inference' }),
  PLUGINS: Joi.string().pattern(/^[a-z0-9-]+(,[a-z0-9-]+)*$/).default('catalog,account,closed,speech,jobs,dialogue,srt,dub,usage,webhooks,audiobooks,oauth,mcp,console,admin')
    .messages({ 'string.pattern.base': '"PLUGINS" must be a comma-separated list of plugin folder names (lowercase letters, digits, dashes)' }),
  MODULES: Joi.string()
    .pattern(/^(inference|pipelines\/[a-z0-9-]+)(,(inference|pipelines\/[a-z0-9-]+))*$/)
    .allow('')
    .default('inference,pipelines/ledger-writer,pipelines/usage-aggregator,pipelines/webhook-dispatcher')
    .messages({ 'string.pattern.base': '"MODULES" must be a comma-separated list of module folders: inference, pipelines/<name>' }),
  OPS_PORT: Joi.number().integer().min(0).max(65535).default(9464),
  METRICS_TOKEN: Joi.string().min(16),
  SHUTDOWN_TIMEOUT_SECONDS: Joi.number().min(1).max(3600).default(25),
  LOG_LEVEL: Joi.string().valid('debug', 'info', 'warn', 'error', 'silent').default('info'),

  KAFKA_BROKERS: brokerList,
  KAFKA_CLIENT_ID: Joi.string().default('vieneu-tts'),
  KAFKA_PARTITIONS: Joi.number().integer().min(1).max(256).default(6),
  // How often an api process publishes the events the bus refused (core/bus-spill.ts).
  BUS_SPILL_RELAY_SECONDS: Joi.number().min(0.1).max(3600).default(5),
  MONGODB_URL: Joi.string().uri({ scheme: ['mongodb', 'mongodb+srv'] }),
  MONGODB_DB: Joi.string().default('vieneu'),
  CLICKHOUSE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  CLICKHOUSE_DATABASE: Joi.string().pattern(/^[A-Za-z_][A-Za-z0-9_]*$/).default('vieneu'),
  CLICKHOUSE_USER: Joi.string().default('default'),
  CLICKHOUSE_PASSWORD: Joi.string().allow('').default(''),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }),
  INFERENCE_PORT: Joi.number().integer().min(0).max(65535),
  // One inference service address, or its instances' comma-separated (spread in turn, failing over).
  INFERENCE_URL: Joi.string()
    .custom((value: string, helpers) => {
      const urls = value.split(',').map((url) => url.trim());
      const bad = urls.find((url) => Joi.string().uri({ scheme: ['http', 'https'] }).validate(url).error);
      return bad === undefined ? urls.join(',') : helpers.error('any.invalid', { bad });
    })
    .messages({ 'any.invalid': '"INFERENCE_URL" must be an http(s) URL or a comma-separated list of them ({#bad} is not)' }),

  URL_SIGNING_SECRET: Joi.string().min(16),
  SESSION_SECRET: Joi.string().min(16),
  SESSION_TTL_HOURS: Joi.number().min(0.01).max(720).default(12),
  // At least 2: the lockout of an e-mail no user has counts the failures before the one that locks it.
  SIGNIN_MAX_FAILURES: Joi.number().integer().min(2).max(100).default(5),
  SIGNIN_LOCKOUT_MINUTES: Joi.number().min(0.01).max(1440).default(15),
  SIGNIN_PER_MINUTE: Joi.number().integer().min(1).default(10),
  CLONE_URL: Joi.string().uri().default('https://studio.vieneu.vn/voices/clone'),

  GLOBAL_MULTIPLIER: Joi.number().positive().default(1.3),
  V4_MULTIPLIER: Joi.number().positive().default(3),
  AI_REFINE_SURCHARGE_PER_CHAR: Joi.number().min(0).default(0.5),
  BILLING_TIMEZONE_OFFSET_MINUTES: Joi.number().integer().min(-720).max(840).default(420),
  // How long a process may go without a beat before the charges of the requests it was answering are refunded.
  CHARGE_HOLD_LEASE_SECONDS: Joi.number().min(0.3).max(3600).default(60),

  QUEUE_MAX_DEPTH: Joi.number().integer().min(1).default(10000),
  USER_QUEUE_MAX: Joi.number().integer().min(1).default(30),
  RATE_SPEECH_PER_MINUTE: Joi.number().integer().min(1).default(300),
  RATE_DIALOGUE_PER_MINUTE: Joi.number().integer().min(1).default(20),
  RATE_MEDIA_PER_MINUTE: Joi.number().integer().min(1).default(10),
  ACCOUNT_ROUTES_PER_MINUTE: Joi.number().integer().min(1).default(600),
  // Edge limits per source address (SPEC Limits); 0 turns one off (an ingress in front enforces it).
  TRUSTED_PROXIES: proxyList,
  EDGE_REQUESTS_PER_MINUTE: Joi.number().integer().min(0).default(3000),
  EDGE_CONNECTIONS: Joi.number().integer().min(0).default(300),
  EDGE_STREAM_REQUESTS_PER_MINUTE: Joi.number().integer().min(0).default(500),
  EDGE_STREAM_CONNECTIONS: Joi.number().integer().min(0).default(20),
  STREAM_CAPACITY: Joi.number().integer().min(1).default(64),
  STREAMS_PER_GRANT: Joi.number().integer().min(1).default(4),
  STREAMS_PER_USER: Joi.number().integer().min(1).default(2),
  STREAM_HEARTBEAT_SECONDS: Joi.number().min(0.1).default(2),
  STREAM_ABANDON_SECONDS: Joi.number().min(1).default(120),
  SPEECH_CONCURRENCY_PER_KEY: Joi.number().integer().min(1).default(16),
  SPEECH_CONCURRENCY_PER_ACCOUNT: Joi.number().integer().min(1).default(32),
  SPEECH_CONCURRENCY: Joi.number().integer().min(1).default(64),
  SPEECH_QUEUE_MS: Joi.number().integer().min(0).max(60000).default(3000),
  INFERENCE_CONCURRENCY: Joi.number().integer().min(1).max(64).default(2),
  JOB_LEASE_SECONDS: Joi.number().min(1).default(30),
  JOB_RETRY_BASE_MS: Joi.number().integer().min(1).default(1000),
  JOB_MAX_ATTEMPTS: Joi.number().integer().min(1).max(10).default(3),
  VOICE_MODELS: Joi.string().allow('').default(''),
  MODERATION_TERMS: Joi.string().allow('').default(''),

  WEBHOOK_ALLOW_LOOPBACK: Joi.boolean().truthy('1').falsy('0').default(false),
  WEBHOOK_CA_FILE: Joi.string(),
  WEBHOOK_RETRY_SCALE: Joi.number().positive().max(1).default(1),
}).unknown(true);
