import test from 'ava';
import Joi from 'joi';
import { ConfigError } from '../../config/load.ts';
import { CORE_API_VERSION, definePlugin, type PluginDefinition, type RegisterEnv, type RouteDefinition } from '../../core/plugin.ts';
import { coreServices, createServiceFactory, createServiceRef } from '../../core/services.ts';
import { ServiceRegistry } from '../../core/kernel/registry.ts';
import { inMatchingOrder, routeKey, wireFeatures } from '../../core/kernel/wiring.ts';
import { Readiness } from '../../core/http/probes.ts';
import type { Feature } from '../../core/kernel/loader.ts';

/** The plugin contract's guard rails (README "Adding a plugin"), on features made in the test. */
const feature = (definition: PluginDefinition<any, any>): Feature => ({ folder: `plugins/${definition.id}`, definition });
const plugin = (id: string, extra: Partial<PluginDefinition<any, any>> = {}) =>
  definePlugin({ id, version: '1.0.0', coreApi: CORE_API_VERSION, description: id, deps: {}, register: () => undefined, ...extra });
const route = (method: RouteDefinition['method'], path: string): RouteDefinition =>
  ({ method, path, auth: 'none', name: path.replace(/\W+/g, '_'), handler: async () => undefined });

function registry(): ServiceRegistry {
  const r = new ServiceRegistry();
  r.provide(createServiceFactory({ ref: coreServices.config, deps: {}, create: () => ({ fake: 'config' }) as never }), 'core');
  return r;
}

// 1. Registering after start-up

test('every registrar refuses once register has returned: a late route would never be served', async (t) => {
  let env: RegisterEnv<any, any> | undefined;
  await wireFeatures([feature(plugin('pronounce', { register: (e) => { env = e; } }))], registry(), {});
  t.throws(() => env!.route(route('POST', '/pronounce-late')), {
    message: 'plugin pronounce registered route POST /pronounce-late after start-up: register routes inside register()',
  });
  t.throws(() => env!.mount({ prefix: '/late', middleware: async () => undefined }), { message: /plugin pronounce registered mount \/late after start-up: register mounts inside register\(\)/ });
  t.throws(() => env!.worker({ name: 'w', role: 'pipelines', start: async () => async () => undefined }), { message: /registered worker w after start-up/ });
  t.throws(() => env!.readiness({ name: 'r', roles: ['api'], check: async () => undefined }), { message: /registered readiness check r after start-up/ });
  t.throws(() => env!.authenticator({ name: 'v', accepts: () => false, verify: async () => null } as never), { message: /registered credential verifier v after start-up/ });
});

test('an async register may register until its promise resolves; the wiring has what it registered', async (t) => {
  let env: RegisterEnv<any, any> | undefined;
  const wired = await wireFeatures([feature(plugin('slow', {
    register: async (e) => {
      env = e;
      await new Promise((resolve) => setTimeout(resolve, 5));
      e.route(route('GET', '/slow'));
    },
  }))], registry(), {});
  t.deepEqual(wired.routes.map((r) => r.path), ['/slow']);
  t.throws(() => env!.route(route('GET', '/slower')), { message: /after start-up/ });
});

// 2. Duplicate paths, compared as the router matches them

test('paths that differ only in letter case, a trailing slash or parameter names are one path: refused naming both plugins', async (t) => {
  const pairs: Array<[string, string]> = [['/echo/price', '/Echo/price'], ['/echo/price', '/echo/price/'], ['/x/:a', '/x/:b'], ['/x/:a/y', '/X/:other/Y/']];
  for (const [first, second] of pairs) {
    const err = await t.throwsAsync(wireFeatures([
      feature(plugin('echo', { register: ({ route: r }) => r(route('POST', first)) })),
      feature(plugin('pronounce', { register: ({ route: r }) => r(route('POST', second)) })),
    ], registry(), {}), { instanceOf: ConfigError }, `${first} and ${second}`);
    t.is(err!.message, `plugin "pronounce" registers POST ${second}, already registered by "echo" as POST ${first}, which the router treats as the same path (letter case, a trailing slash and parameter names do not count)`);
  }
  t.is(routeKey('GET', '/Tts/:jobId/'), routeKey('get', '/tts/:id'));
  t.not(routeKey('GET', '/tts/:id'), routeKey('POST', '/tts/:id'), 'another method is another route');
  t.not(routeKey('GET', '/tts/:id'), routeKey('GET', '/tts/:id/audio'));
});

test('a static path and a parametric one that overlaps it are both allowed; the static one is matched first, whatever the order', async (t) => {
  for (const order of [['echo', 'things'], ['things', 'echo']]) {
    const paths: Record<string, string> = { echo: '/echo/price', things: '/echo/:thing' };
    const wired = await wireFeatures(order.map((id) => feature(plugin(id, { register: ({ route: r }) => r(route('POST', paths[id]!)) }))), registry(), {});
    t.deepEqual(inMatchingOrder(wired.routes).map((r) => r.path), ['/echo/price', '/echo/:thing']);
  }
  const ordered = inMatchingOrder([route('GET', '/:a/b'), route('GET', '/files/*rest'), route('GET', '/x/:c'), route('GET', '/files/a/b'), route('GET', '/voices')]);
  t.deepEqual(ordered.map((r) => r.path), ['/voices', '/files/a/b', '/files/*rest', '/x/:c', '/:a/b']);
});

// 3. Settings have one owner

test("a plugin may not declare a core setting: refused at start-up naming the plugin, the variable and core", async (t) => {
  const thief = plugin('pronounce', { config: Joi.object({ PORT: Joi.number(), PRONOUNCE_MAX_CHARS: Joi.number().default(5) }) });
  const err = await t.throwsAsync(wireFeatures([feature(thief)], registry(), { PORT: '8080' }), { instanceOf: ConfigError });
  t.regex(err!.message, /^Invalid configuration: plugin pronounce declares PORT, a setting of core \(config\/schema\.ts\)/);
  const file = plugin('files', { config: Joi.object({ CONFIG_FILE: Joi.string() }) });
  await t.throwsAsync(wireFeatures([feature(file)], registry(), {}), { instanceOf: ConfigError, message: /plugin files declares CONFIG_FILE, a setting of core/ });
});

test('two plugins declaring one variable are refused naming both, before either validates it', async (t) => {
  const echo = plugin('echo', { config: Joi.object({ ECHO_MAX_CHARS: Joi.number().integer().min(1).default(500) }) });
  const pronounce = plugin('pronounce', { config: Joi.object({ ECHO_MAX_CHARS: Joi.number().integer().max(5).default(3) }) });
  // ECHO_MAX_CHARS=100 is echo's to judge; without the owner check pronounce's rule refused it in pronounce's name.
  const err = await t.throwsAsync(wireFeatures([feature(echo), feature(pronounce)], registry(), { ECHO_MAX_CHARS: '100' }), { instanceOf: ConfigError });
  t.regex(err!.message, /plugin pronounce declares ECHO_MAX_CHARS, which plugin echo declares too: a setting has one owner/);
  t.notRegex(err!.message, /must be less than or equal to 5/);
});

test('settings of their own are unaffected: each plugin receives its own values', async (t) => {
  const seen: Record<string, unknown> = {};
  const a = plugin('a', { config: Joi.object({ A_LIMIT: Joi.number().default(1) }), register: ({ config }) => { seen.a = config; } });
  const b = plugin('b', { config: Joi.object({ B_LIMIT: Joi.number().default(2) }), register: ({ config }) => { seen.b = config; } });
  await wireFeatures([feature(a), feature(b)], registry(), { A_LIMIT: '7', PORT: '8080' });
  t.deepEqual(seen, { a: { A_LIMIT: 7 }, b: { B_LIMIT: 2 } });
});

// 4. A dep that is not a service ref

test('a typo in deps (undefined) stops start-up naming the plugin and the key, not a TypeError', async (t) => {
  const typo = plugin('pronounce', { deps: { billing: (coreServices as Record<string, unknown>).billng as never } });
  const err = await t.throwsAsync(wireFeatures([feature(typo)], registry(), {}), { instanceOf: ConfigError });
  t.is(err!.message, 'plugin pronounce: deps.billing is not a service ref (undefined): use coreServices.<name>');
  const uncalled = plugin('publisher', { deps: { out: coreServices.publisher as never } });
  await t.throwsAsync(wireFeatures([feature(uncalled)], registry(), {}), { instanceOf: ConfigError, message: /deps\.out is not a service ref \(a function: call it/ });
  const provider = plugin('provider', {
    provides: [createServiceFactory({ ref: createServiceRef<string>('test.thing'), deps: { logger: undefined as never }, create: () => 'x' })],
  });
  await t.throwsAsync(wireFeatures([feature(provider)], registry(), {}), { instanceOf: ConfigError, message: /plugin provider: provides\[0\] \(service "test\.thing"\) deps\.logger is not a service ref \(undefined\)/ });
});

// 5. Readiness: states for the public port, messages for the ops port

const econnrefused = () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:7000'), { code: 'ECONNREFUSED' });

test('a failing check is "failing" unless a dependency could not be reached; the public view names states only', async (t) => {
  const readiness = new Readiness();
  readiness.add({ name: 'documents', ping: true, check: async () => { throw new Error('pool closed'); } });
  readiness.add({ name: 'counters', ping: true, degradable: true, check: async () => { throw new Error('Command timed out'); } });
  readiness.add({ name: 'pronounce:pronounce', check: async () => { throw new Error('pronounce lexicon not loaded from /srv/secret/lexicon.db'); } });
  readiness.add({ name: 'pronounce:upstream', check: async () => { throw econnrefused(); } });
  readiness.add({ name: 'echo:ok', check: async () => undefined });
  readiness.set(true);
  t.deepEqual(await readiness.report(), {
    ready: false,
    body: {
      status: 'not_ready',
      checks: {
        documents: 'unreachable: pool closed',
        counters: 'degraded, unreachable: Command timed out',
        'pronounce:pronounce': 'failing: pronounce lexicon not loaded from /srv/secret/lexicon.db',
        'pronounce:upstream': 'unreachable: connect ECONNREFUSED 10.0.0.5:7000',
        'echo:ok': 'ok',
      },
    },
  });
  const shown = await readiness.withoutMessages().report();
  t.deepEqual(shown, {
    ready: false,
    body: {
      status: 'not_ready',
      checks: { documents: 'unreachable', counters: 'degraded, unreachable', 'pronounce:pronounce': 'failing', 'pronounce:upstream': 'unreachable', 'echo:ok': 'ok' },
    },
  });
  t.false(JSON.stringify(shown).includes('secret'));
});

test('readiness keeps its rules: not ready before start-up and once stopping; a degradable failure only degrades', async (t) => {
  const readiness = new Readiness();
  readiness.add({ name: 'analytics', ping: true, degradable: true, check: async () => { throw econnrefused(); } });
  t.like(await readiness.report(), { ready: false, body: { status: 'shutting_down' } });
  readiness.set(true);
  t.like(await readiness.withoutMessages().report(), { ready: true, body: { status: 'degraded', checks: { analytics: 'degraded, unreachable' } } });
  readiness.set(false);
  t.like(await readiness.report(), { ready: false, body: { status: 'shutting_down' } });
});
