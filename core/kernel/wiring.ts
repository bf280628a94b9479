import { ConfigError } from '../../config/load.ts';
import { envSchema } from '../../config/schema.ts';
import { CORE_API_VERSION, type BackgroundWorker, type MountDefinition, type ReadinessCheck, type RouteDefinition } from '../plugin.ts';
import type { CredentialVerifier } from '../http/auth.ts';
import type { ServiceRef } from '../services.ts';
import type { ServiceRegistry } from './registry.ts';
import type { Feature } from './loader.ts';

export interface OwnedRoute extends RouteDefinition {
  plugin: string;
}

export interface Wired {
  routes: OwnedRoute[];
  mounts: Array<MountDefinition & { plugin: string }>;
  workers: BackgroundWorker[];
  readiness: ReadinessCheck[];
  authenticators: CredentialVerifier[];
  /** every wired feature, for the API reference's groups */
  plugins: Array<{ id: string; description: string }>;
}

/** What a value given where a service ref belongs is, for the message that refuses it. */
function describeNonRef(value: unknown): string {
  if (typeof value === 'function') return 'a function: call it, e.g. coreServices.publisher([...])';
  if (value === null || value === undefined) return String(value);
  return typeof value === 'object' ? 'an object without a string id' : `${typeof value} ${JSON.stringify(value)}`;
}

const isServiceRef = (value: unknown): value is ServiceRef<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string';

/**
 * Every `deps` entry of a feature, and of the services it provides, must be a
 * service ref: a typo (`coreServices.billng`) is undefined at run time, and
 * would otherwise stop start-up with a TypeError that names neither.
 */
function checkDepRefs(definition: Feature['definition']): void {
  const id = definition.id;
  const check = (deps: unknown, where: string) => {
    if (typeof deps !== 'object' || deps === null) throw new ConfigError(`plugin ${id}: ${where} must be an object of service refs (coreServices.<name>), not ${describeNonRef(deps)}`);
    for (const [key, ref] of Object.entries(deps)) {
      if (!isServiceRef(ref)) throw new ConfigError(`plugin ${id}: ${where}.${key} is not a service ref (${describeNonRef(ref)}): use coreServices.<name>`);
    }
  };
  check(definition.deps, 'deps');
  (definition.provides ?? []).forEach((factory, i) => {
    if (!isServiceRef(factory?.ref)) throw new ConfigError(`plugin ${id}: provides[${i}].ref is not a service ref (${describeNonRef(factory?.ref)}): create it with createServiceRef`);
    check(factory.deps, `provides[${i}] (service "${factory.ref.id}") deps`);
  });
}

/** Refuses a feature written for another core API, a duplicate id, a dep that is not a service ref, a missing or circular dependency. */
function checkManifests(features: Feature[]): void {
  const ids = new Map<string, string>();
  for (const { folder, definition } of features) {
    if (definition.coreApi !== CORE_API_VERSION) {
      throw new ConfigError(`${folder} was written for core API ${definition.coreApi}; this core provides API ${CORE_API_VERSION}`);
    }
    checkDepRefs(definition);
    const other = ids.get(definition.id);
    if (other) throw new ConfigError(`${folder} and ${other} both declare id "${definition.id}"`);
    ids.set(definition.id, folder);
  }
  for (const { folder, definition } of features) {
    for (const needed of definition.dependsOn ?? []) {
      if (!ids.has(needed)) throw new ConfigError(`${folder} depends on plugin "${needed}", which is not loaded: add it to PLUGINS`);
    }
  }
}

/** Dependencies first; a cycle is refused with its path. */
function inDependencyOrder(features: Feature[]): Feature[] {
  const byId = new Map(features.map((f) => [f.definition.id, f]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const out: Feature[] = [];
  const visit = (f: Feature) => {
    const id = f.definition.id;
    if (done.has(id)) return;
    if (visiting.includes(id)) throw new ConfigError(`plugins depend on each other in a cycle: ${[...visiting, id].join(' -> ')}`);
    visiting.push(id);
    for (const dep of f.definition.dependsOn ?? []) visit(byId.get(dep)!);
    visiting.pop();
    done.add(id);
    out.push(f);
  };
  features.forEach(visit);
  return out;
}

/** Variables core reads itself: its schema's, and CONFIG_FILE, which names the file the others may come from. */
function coreSettings(): Set<string> {
  return new Set([...Object.keys(envSchema.describe().keys ?? {}), 'CONFIG_FILE']);
}

/**
 * A variable belongs to one owner: core, or the one feature that declares it.
 * Two claimants would each apply their own default and rule to one value (and
 * a refusal would blame either), and a core setting would reach a plugin that
 * did not ask for `coreServices.config`.
 */
function checkConfigOwners(features: Feature[]): void {
  const core = coreSettings();
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const { definition } of features) {
    const keys = Object.keys(definition.config?.describe().keys ?? {});
    const prefix = `${definition.id.replace(/-/g, '_').toUpperCase()}_`;
    for (const key of keys) {
      const other = owners.get(key);
      if (core.has(key)) {
        problems.push(`plugin ${definition.id} declares ${key}, a setting of core (config/schema.ts): read core's settings through coreServices.config, and give the plugin's own settings its own names (e.g. ${prefix}…)`);
      } else if (other) {
        problems.push(`plugin ${definition.id} declares ${key}, which plugin ${other} declares too: a setting has one owner: give plugin ${definition.id}'s setting a name of its own (e.g. ${prefix}…)`);
      } else {
        owners.set(key, definition.id);
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

/** Validates every feature's own config section against the settings as read; all problems in one message. */
function featureConfigs(features: Feature[], source: Record<string, unknown>): Map<string, unknown> {
  checkConfigOwners(features);
  const values = new Map<string, unknown>();
  const problems: string[] = [];
  for (const { definition } of features) {
    if (!definition.config) {
      values.set(definition.id, {});
      continue;
    }
    const { value, error } = definition.config.validate(source, { abortEarly: false, convert: true, allowUnknown: true, stripUnknown: true });
    if (error) problems.push(...error.details.map((d) => `plugin ${definition.id}: ${d.message}`));
    values.set(definition.id, value);
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return values;
}

/** Engine feature names (`GET /engines`) served by the loaded plugins. */
export function engineFeaturesOf(features: Feature[]): Set<string> {
  return new Set(features.flatMap((f) => f.definition.engineFeatures ?? []));
}

/**
 * A route's path as the router matches it: letter case and a trailing slash
 * do not count, nor do parameter names (`/x/:a` and `/x/:b` are one path to a
 * client), so two paths with the same key answer the same requests.
 */
export function routeKey(method: string, path: string): string {
  const shape = path.toLowerCase().replace(/([:*])(?:"(?:[^"\\]|\\.)*"|[a-z_$][\w$]*)/g, '$1').replace(/\/+$/, '');
  return `${method.toUpperCase()} ${shape || '/'}`;
}

/** A static segment outranks a parameter at the same place; the first difference decides. */
function precedence(path: string): string {
  return path.split('/').filter(Boolean).map((segment) => (/[:*]/.test(segment) ? '1' : '0')).join('');
}

/**
 * The routes in the order the router must hold them: a route asked for by a
 * static path wins over a parametric one that also matches it (`/echo/price`
 * over `/echo/:thing`), whatever order the plugins registered them in and
 * whatever case or trailing slash the request has. Stable otherwise.
 */
export function inMatchingOrder<R extends { path: string }>(routes: R[]): R[] {
  const keyed = routes.map((route, i) => ({ route, i, key: precedence(route.path) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
  return keyed.map(({ route }) => route);
}

/**
 * Registers every feature: its provided services first (so order does not
 * matter for services), then each `register` in dependency order with exactly
 * the services it declared. A path claimed twice (as the router matches
 * paths) stops start-up; the registrars refuse anything once `register` has
 * returned (or its promise resolved), since what they would add is never served.
 */
export async function wireFeatures(features: Feature[], registry: ServiceRegistry, source: Record<string, unknown>): Promise<Wired> {
  checkManifests(features);
  const configs = featureConfigs(features, source);
  for (const { definition } of features) for (const factory of definition.provides ?? []) registry.provide(factory, definition.id);

  const wired: Wired = { routes: [], mounts: [], workers: [], readiness: [], authenticators: [], plugins: [] };
  const owners = new Map<string, { plugin: string; as: string }>();
  const claim = (key: string, what: string, plugin: string) => {
    const owner = owners.get(key);
    if (owner) {
      const same = owner.as === what ? '' : ` as ${owner.as}, which the router treats as the same path (letter case, a trailing slash and parameter names do not count)`;
      throw new ConfigError(`plugin "${plugin}" registers ${what}, already registered by "${owner.plugin}"${same}`);
    }
    owners.set(key, { plugin, as: what });
  };
  for (const { definition } of inDependencyOrder(features)) {
    const id = definition.id;
    wired.plugins.push({ id, description: definition.description });
    let deps;
    try {
      deps = await registry.resolve(definition.deps, id);
    } catch (err) {
      throw new ConfigError(`plugin "${id}" cannot start: ${(err as Error).message}`);
    }
    let registering = true;
    const during = (what: string, kinds: string) => {
      if (!registering) throw new Error(`plugin ${id} registered ${what} after start-up: register ${kinds} inside register()`);
    };
    try {
      await definition.register({
        deps,
        config: configs.get(id),
        route(def) {
          during(`route ${def.method} ${def.path}`, 'routes');
          claim(routeKey(def.method, def.path), `${def.method} ${def.path}`, id);
          wired.routes.push({ ...def, plugin: id });
        },
        mount(def) {
          during(`mount ${def.prefix}`, 'mounts');
          claim(`mount ${def.prefix.replace(/\/+$/, '') || '/'}`, `mount ${def.prefix}`, id);
          wired.mounts.push({ ...def, plugin: id });
        },
        worker(w) {
          during(`worker ${w.name}`, 'workers');
          wired.workers.push({ ...w, name: `${id}:${w.name}` });
        },
        readiness(check) {
          during(`readiness check ${check.name}`, 'readiness checks');
          wired.readiness.push({ ...check, name: `${id}:${check.name}` });
        },
        authenticator(verifier) {
          during(`credential verifier ${verifier.name}`, 'credential verifiers');
          claim(`credential verifier ${verifier.name}`, `credential verifier ${verifier.name}`, id);
          wired.authenticators.push(verifier);
        },
      });
    } finally {
      registering = false;
    }
  }
  return wired;
}
