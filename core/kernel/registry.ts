import type { ServiceFactory, ServiceRef } from '../services.ts';

interface Built {
  factory: ServiceFactory<any, any>;
  instance: unknown;
}

/**
 * Builds services on first use from the factories that core and the loaded
 * features provide. Root services are built once; plugin-scoped ones once per
 * asking plugin (and per options). Closing runs in reverse order of
 * building, so a service closes before the ones it was built from.
 */
export class ServiceRegistry {
  private readonly factories = new Map<string, { factory: ServiceFactory<any, any>; provider: string }>();
  private readonly instances = new Map<string, Promise<unknown>>();
  private readonly buildOrder: Built[] = [];
  private readonly resolving: string[] = [];

  /** Registers how to build a service; two providers for one ref stop start-up. */
  provide(factory: ServiceFactory<any, any>, provider: string): void {
    const existing = this.factories.get(factory.ref.id);
    if (existing) throw new Error(`service "${factory.ref.id}" is provided by both "${existing.provider}" and "${provider}"`);
    this.factories.set(factory.ref.id, { factory, provider });
  }

  has(ref: ServiceRef<unknown>): boolean {
    return this.factories.has(ref.id);
  }

  /** The instance of `ref` for `requester` (a plugin id, or `core`). */
  get<T>(ref: ServiceRef<T>, requester: string): Promise<T> {
    const entry = this.factories.get(ref.id);
    if (!entry) {
      return Promise.reject(new Error(`"${requester}" needs service "${ref.id}", which nothing loaded provides`));
    }
    const key = ref.scope === 'root' ? ref.id : `${ref.id}|${requester}|${JSON.stringify(ref.options ?? null)}`;
    let instance = this.instances.get(key);
    if (!instance) {
      if (this.resolving.includes(key)) {
        return Promise.reject(new Error(`services depend on each other in a cycle: ${[...this.resolving, key].join(' -> ')}`));
      }
      instance = this.build(entry.factory, key, { pluginId: requester, options: ref.options });
      this.instances.set(key, instance);
    }
    return instance as Promise<T>;
  }

  /** The root instance of `ref` if something already built it, else undefined (readiness pings only what was opened). */
  async built<T>(ref: ServiceRef<T>): Promise<T | undefined> {
    const instance = this.instances.get(ref.id);
    return instance ? ((await instance) as T) : undefined;
  }

  /** Resolves a map of refs for one requester. */
  async resolve<D extends Record<string, ServiceRef<unknown>>>(deps: D, requester: string): Promise<{ [K in keyof D]: unknown }> {
    const out: Record<string, unknown> = {};
    for (const [name, ref] of Object.entries(deps)) out[name] = await this.get(ref, requester);
    return out as { [K in keyof D]: unknown };
  }

  private async build(factory: ServiceFactory<any, any>, key: string, requester: { pluginId: string; options?: unknown }): Promise<unknown> {
    this.resolving.push(key);
    let deps: Record<string, unknown>;
    try {
      // A service's own dependencies are asked for in its name when plugin-scoped, so a
      // plugin's logger is the plugin's child logger all the way down.
      deps = await this.resolve(factory.deps, factory.ref.scope === 'plugin' ? requester.pluginId : `service ${factory.ref.id}`);
    } finally {
      this.resolving.splice(this.resolving.indexOf(key), 1);
    }
    const instance = await factory.create(deps, requester);
    this.buildOrder.push({ factory, instance });
    return instance;
  }

  /** Closes every built service that has a `close`, newest first; errors are reported, not thrown. */
  async close(onError: (id: string, err: unknown) => void): Promise<void> {
    for (const { factory, instance } of this.buildOrder.splice(0).reverse()) {
      if (!factory.close) continue;
      try {
        await factory.close(instance);
      } catch (err) {
        onError(factory.ref.id, err);
      }
    }
    this.instances.clear();
  }
}
