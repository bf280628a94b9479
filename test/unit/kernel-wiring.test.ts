import test from 'ava';
import Joi from 'joi';
import { ConfigError } from '../../config/load.ts';
import { CORE_API_VERSION, definePlugin, type PluginDefinition } from '../../core/plugin.ts';
import { coreServices, createServiceFactory, createServiceRef } from '../../core/services.ts';
import { ServiceRegistry } from '../../core/kernel/registry.ts';
import { wireFeatures, engineFeaturesOf } from '../../core/kernel/wiring.ts';
import type { Feature } from '../../core/kernel/loader.ts';

/** The kernel's start-up rules, on features made in the test (no folders needed). */
const feature = (definition: PluginDefinition<any, any>): Feature => ({ folder: `plugins/${definition.id}`, definition });
const plugin = (id: string, extra: Partial<PluginDefinition<any, any>> = {}) =>
  definePlugin({ id, version: '1.0.0', coreApi: CORE_API_VERSION, description: id, deps: {}, register: () => undefined, ...extra });

function registry(): ServiceRegistry {
  const r = new ServiceRegistry();
  r.provide(createServiceFactory({ ref: coreServices.config, deps: {}, create: () => ({ fake: 'config' }) as never }), 'core');
  return r;
}

test('a plugin that depends on a plugin that is not loaded stops start-up naming it', async (t) => {
  const err = await t.throwsAsync(wireFeatures([feature(plugin('speech', { dependsOn: ['jobs'] }))], registry(), {}), { instanceOf: ConfigError });
  t.regex(err!.message, /plugins\/speech depends on plugin "jobs", which is not loaded: add it to PLUGINS/);
});

test('a plugin written for another core API version is refused with both versions', async (t) => {
  const err = await t.throwsAsync(wireFeatures([feature(plugin('old', { coreApi: 1 }))], registry(), {}), { instanceOf: ConfigError });
  t.regex(err!.message, new RegExp(`plugins/old was written for core API 1; this core provides API ${CORE_API_VERSION}`));
});

test('dependencies register first, whatever the configured order; a cycle is refused with its path', async (t) => {
  const order: string[] = [];
  const a = plugin('a', { dependsOn: ['b'], register: () => void order.push('a') });
  const b = plugin('b', { register: () => void order.push('b') });
  await wireFeatures([feature(a), feature(b)], registry(), {});
  t.deepEqual(order, ['b', 'a']);
  const err = await t.throwsAsync(wireFeatures([feature(plugin('x', { dependsOn: ['y'] })), feature(plugin('y', { dependsOn: ['x'] }))], registry(), {}));
  t.regex(err!.message, /cycle: x -> y -> x/);
});

test("a plugin's own config section is validated at start-up with named variables, and it receives the typed values", async (t) => {
  let seen: unknown;
  const echo = plugin('echo', {
    config: Joi.object({ ECHO_MAX_CHARS: Joi.number().integer().min(1).default(500) }),
    register: ({ config }) => { seen = config; },
  });
  await wireFeatures([feature(echo)], registry(), { ECHO_MAX_CHARS: '40', UNRELATED: 'x' });
  t.deepEqual(seen, { ECHO_MAX_CHARS: 40 });
  const err = await t.throwsAsync(wireFeatures([feature(echo)], registry(), { ECHO_MAX_CHARS: '0' }), { instanceOf: ConfigError });
  t.regex(err!.message, /plugin echo: "ECHO_MAX_CHARS" must be greater than or equal to 1/);
});

test('a plugin receives exactly the services it declared; a service nothing provides stops start-up naming both', async (t) => {
  let received: Record<string, unknown> = {};
  await wireFeatures([feature(plugin('p', { deps: { config: coreServices.config }, register: ({ deps }) => { received = deps; } }))], registry(), {});
  t.deepEqual(Object.keys(received), ['config']);
  const err = await t.throwsAsync(wireFeatures([feature(plugin('speech', { deps: { engine: coreServices.engine } }))], registry(), {}));
  t.regex(err!.message, /plugin "speech" cannot start: "speech" needs service "core.engine", which nothing loaded provides/);
});

test('a feature can provide a service to the others; two providers of one service are refused', async (t) => {
  const greeting = createServiceRef<string>('test.greeting');
  const provider = plugin('provider', { provides: [createServiceFactory({ ref: greeting, deps: {}, create: () => 'xin chào' })] });
  let got = '';
  const user = plugin('user', { deps: { greeting }, register: ({ deps }) => { got = deps.greeting as string; } });
  await wireFeatures([feature(user), feature(provider)], registry(), {});
  t.is(got, 'xin chào');
  const twice = plugin('twice', { provides: [createServiceFactory({ ref: greeting, deps: {}, create: () => 'hi' })] });
  const err = await t.throwsAsync(wireFeatures([feature(provider), feature(twice)], registry(), {}));
  t.regex(err!.message, /service "test.greeting" is provided by both "provider" and "twice"/);
});

test('plugin-scoped services are built per plugin; root services once', async (t) => {
  const r = registry();
  let built = 0;
  const scoped = createServiceRef<{ owner: string }>('test.scoped', 'plugin');
  r.provide(createServiceFactory({ ref: scoped, deps: {}, create: (_d, requester) => { built++; return { owner: requester.pluginId }; } }), 'core');
  const owners: string[] = [];
  const p = (id: string) => plugin(id, { deps: { s: scoped, c: coreServices.config }, register: ({ deps }) => void owners.push((deps.s as { owner: string }).owner) });
  await wireFeatures([feature(p('one')), feature(p('two'))], r, {});
  t.deepEqual(owners, ['one', 'two']);
  t.is(built, 2);
});

test('a path registered by two plugins stops start-up naming both', async (t) => {
  const route = { method: 'GET' as const, path: '/same', auth: 'none' as const, name: 'same', handler: async () => undefined };
  const err = await t.throwsAsync(wireFeatures([
    feature(plugin('first', { register: ({ route: r }) => r(route) })),
    feature(plugin('second', { register: ({ route: r }) => r(route) })),
  ], registry(), {}));
  t.regex(err!.message, /plugin "second" registers GET \/same, already registered by "first"/);
});

test('GET /engines features are the union of what the loaded plugins serve', (t) => {
  const set = engineFeaturesOf([feature(plugin('a', { engineFeatures: ['generate', 'stream'] })), feature(plugin('b', { engineFeatures: ['dialogue'] }))]);
  t.deepEqual([...set].sort(), ['dialogue', 'generate', 'stream']);
});
