import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
  ['KAFKA_BROKERS entries need a port', { KAFKA_BROKERS: 'not_a_broker' }, /"KAFKA_BROKERS" entry "not_a_broker" has no port; KAFKA_BROKERS must be a comma-separated list of host:port \(a host name or IPv4 address, port 1-65535\)/],
  ['KAFKA_BROKERS ports are 1-65535', { KAFKA_BROKERS: 'k1:9092,k2:70000' }, /"KAFKA_BROKERS" entry "k2:70000" has port "70000", not a number from 1 to 65535/],
  ['KAFKA_BROKERS port 0 is no broker', { KAFKA_BROKERS: 'k1:0' }, /"KAFKA_BROKERS" entry "k1:0" has port "0"/],
  ['KAFKA_BROKERS takes no URL', { KAFKA_BROKERS: 'kafka://k1:9092' }, /"KAFKA_BROKERS" entry "kafka:\/\/k1:9092" is not host:port/],
  ['KAFKA_BROKERS hosts are names or IPv4 addresses', { KAFKA_BROKERS: '10.0.0.300:9092' }, /"KAFKA_BROKERS" entry "10\.0\.0\.300:9092" has host "10\.0\.0\.300", neither a host name nor an IPv4 address/],
  ['KAFKA_BROKERS has no empty entry', { KAFKA_BROKERS: 'k1:9092,' }, /"KAFKA_BROKERS" entry "" is empty/],
  ['KAFKA_BROKERS cannot take an IPv6 literal (kafkajs splits at the first colon)', { KAFKA_BROKERS: '[::1]:9092' }, /"KAFKA_BROKERS" entry "\[::1\]:9092" is an IPv6 address, which kafkajs cannot take/],
];

test('KAFKA_BROKERS takes host names and IPv4 addresses with their port, comma-separated', (t) => {
  const brokers = (value: string) => loadConfig({ KAFKA_BROKERS: value } as NodeJS.ProcessEnv).kafka?.brokers;
  t.deepEqual(brokers('kafka-0.kafka.data.svc.cluster.local:9092, 10.0.0.7:9093,kafka_1:29092'), ['kafka-0.kafka.data.svc.cluster.local:9092', '10.0.0.7:9093', 'kafka_1:29092']);
  t.deepEqual(brokers('localhost:65535'), ['localhost:65535']);
});

for (const [content, held] of [['[1,2]', 'an array'], ['5', 'a number'], ['"x"', 'a string'], ['null', 'null'], ['true', 'a boolean']]) {
  test(`a CONFIG_FILE holding ${held} (valid JSON, no object of settings) stops start-up`, (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-config-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'settings.json');
    writeFileSync(file, content!);
    const err = t.throws(() => loadConfig({ CONFIG_FILE: file } as NodeJS.ProcessEnv), { instanceOf: ConfigError });
    t.is(err!.message, `CONFIG_FILE ${file} must hold a JSON object of settings (like {"PORT": 8080}), not ${held}`);
  });
}

test('a CONFIG_FILE holding an object of settings is read (the environment wins)', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'settings.json');
  writeFileSync(file, JSON.stringify({ PORT: 9001, OPS_PORT: 9002 }));
  const c = loadConfig({ CONFIG_FILE: file, OPS_PORT: '9003' } as NodeJS.ProcessEnv);
  t.is(c.port, 9001);
  t.is(c.opsPort, 9003);
});

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
