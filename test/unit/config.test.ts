import test from 'ava';
import { spawnSync } from 'node:child_process';
import { loadConfig, ConfigError } from '../../config/load.ts';

test('defaults: port 8080, all roles, embedded adapters', (t) => {
  const c = loadConfig({} as NodeJS.ProcessEnv);
  t.is(c.port, 8080);
  t.deepEqual(c.roles, ['api', 'pipelines', 'inference']);
  t.is(c.kafka, null);
  t.is(c.mongo, null);
  t.is(c.clickhouse, null);
  t.is(c.redisUrl, null);
  t.is(c.billing.globalMultiplier, 1.3);
  t.is(c.engines[0].billingMultiplier, 3);
});

test('adapters are chosen by KAFKA_BROKERS, MONGODB_URL, CLICKHOUSE_URL, REDIS_URL', (t) => {
  const c = loadConfig({ KAFKA_BROKERS: 'k1:9092,k2:9092', MONGODB_URL: 'mongodb://m:27017', CLICKHOUSE_URL: 'http://ch:8123', REDIS_URL: 'redis://r:6379' } as NodeJS.ProcessEnv);
  t.deepEqual(c.kafka?.brokers, ['k1:9092', 'k2:9092']);
  t.is(c.mongo?.url, 'mongodb://m:27017');
  t.is(c.clickhouse?.url, 'http://ch:8123');
  t.is(c.redisUrl, 'redis://r:6379');
});

test('INFERENCE_URL takes one inference service address or a comma-separated list of its instances', (t) => {
  t.deepEqual(loadConfig({} as NodeJS.ProcessEnv).inferenceUrls, []);
  t.deepEqual(loadConfig({ INFERENCE_URL: 'http://inference:9090' } as NodeJS.ProcessEnv).inferenceUrls, ['http://inference:9090']);
  t.deepEqual(loadConfig({ INFERENCE_URL: 'http://10.0.0.1:9090, https://10.0.0.2:9090' } as NodeJS.ProcessEnv).inferenceUrls, ['http://10.0.0.1:9090', 'https://10.0.0.2:9090']);
});

const BAD: Array<[string, Record<string, string>, RegExp]> = [
  ['PORT must be a number', { PORT: 'eighty' }, /"PORT" must be a number/],
  ['PORT must be at most 65535', { PORT: '70000' }, /"PORT" must be less than or equal to 65535/],
  ['ROLES must list known roles', { ROLES: 'api,gpu' }, /"ROLES" must be a comma-separated list/],
  ['MONGODB_URL must be a mongodb URI', { MONGODB_URL: 'http://x' }, /"MONGODB_URL" must be a valid uri/],
  ['GLOBAL_MULTIPLIER must be positive', { GLOBAL_MULTIPLIER: '-1' }, /"GLOBAL_MULTIPLIER" must be a positive number/],
  ['METRICS_TOKEN must be long enough', { METRICS_TOKEN: 'short' }, /"METRICS_TOKEN" length must be at least 16/],
  ['MODULES must name module folders', { MODULES: 'plugins/speech' }, /"MODULES" must be a comma-separated list of module folders/],
  ['INFERENCE_URL must list http(s) URLs', { INFERENCE_URL: 'http://a:9090,ftp://b' }, /"INFERENCE_URL" must be an http\(s\) URL or a comma-separated list of them \(ftp:\/\/b is not\)/],
  ['VOICE_MODELS must name known voices', { VOICE_MODELS: 'nobody=/tmp/x' }, /VOICE_MODELS names unknown voice "nobody"/],
  ['TRUSTED_PROXIES must list addresses or CIDR ranges', { TRUSTED_PROXIES: '10.0.0.0/8,ingress' }, /"TRUSTED_PROXIES" entry "ingress" is not an address/],
  ['EDGE_CONNECTIONS cannot be negative', { EDGE_CONNECTIONS: '-1' }, /"EDGE_CONNECTIONS" must be greater than or equal to 0/],
];

test('edge limits default to SPEC Limits; no proxy is trusted unless TRUSTED_PROXIES names it', (t) => {
  const c = loadConfig({} as NodeJS.ProcessEnv);
  t.deepEqual(c.limits.edge, { api: { requestsPerMinute: 3000, connections: 300 }, stream: { requestsPerMinute: 500, connections: 20 } });
  t.is(c.limits.streamsPerUser, 2);
  t.deepEqual(c.trustedProxies, []);
  t.deepEqual(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, loopback,2001:db8::/32' } as NodeJS.ProcessEnv).trustedProxies, ['10.0.0.0/8', 'loopback', '2001:db8::/32']);
});

for (const [rule, env, message] of BAD) {
  test(`a bad value stops start-up naming the variable and the rule: ${rule}`, (t) => {
    const err = t.throws(() => loadConfig(env as NodeJS.ProcessEnv), { instanceOf: ConfigError });
    t.regex(err!.message, message);
  });
}

test('npm start with a bad value exits with the message and does not serve', (t) => {
  const run = spawnSync(process.execPath, ['--import=tsx', 'core/main.ts'], { env: { ...process.env, PORT: 'nope' }, encoding: 'utf8', timeout: 30_000 });
  t.not(run.status, 0);
  t.regex(run.stderr, /"PORT" must be a number/);
});
