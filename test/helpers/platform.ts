import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../config/load.ts';
import { startPlatform, type Platform } from '../../core/kernel/platform.ts';
import { UndocumentedResponse, watchPlatform } from './checked-fetch.ts';
import { coreServices } from '../../core/services.ts';
import type { PipelineServices } from '../../core/http/route-pipeline.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestPlatform {
  platform: Platform;
  /** probes and metrics listener */
  opsUrl: string;
  config: Config;
  url: string;
  dataDir: string;
  /** fetch relative to the API prefix */
  api(pathname: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  admin(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** a fresh account with a grant and a live key */
  bootstrap(input?: { grant?: Record<string, unknown>; kind?: 'live' | 'test'; name?: string }): Promise<{ accountId: string; grantId: string; keyId: string; apiKey: string }>;
  stop(): Promise<void>;
}

/**
 * Starts the real platform (all roles, embedded defaults) on a free port with
 * its own data directory. `env` overrides configuration variables. Every
 * response a test receives from it is checked against its API reference
 * (test/helpers/checked-fetch.ts).
 */
export async function startTestPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  // A DATA_DIR given by the test outlives this platform (a restart on the same files); one made here does not.
  const ownsDataDir = env.DATA_DIR === undefined;
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'vieneu-test-'));
  // bootstrap() goes through the admin API, so the admin plugin is always loaded.
  const plugins = env.PLUGINS && !env.PLUGINS.split(',').includes('admin') ? { PLUGINS: `${env.PLUGINS},admin` } : {};
  const config = loadConfig({ PORT: '0', OPS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ADMIN_TOKEN, ...env, DATA_DIR: dataDir, ...plugins } as NodeJS.ProcessEnv);
  const platform = await startPlatform(config, {});
  const url = platform.url!;
  const unwatch = await watchPlatform(url, platform.server).catch(async (err: unknown) => {
    await platform.stop();
    throw err;
  });

  const withJson = (init: (RequestInit & { json?: unknown }) | undefined, headers: Record<string, string>): RequestInit => {
    const { json, ...rest } = init ?? {};
    const h = { ...headers, ...(rest.headers as Record<string, string> | undefined) };
    if (json !== undefined) h['content-type'] = 'application/json';
    return { ...rest, headers: h, body: json !== undefined ? JSON.stringify(json) : rest.body };
  };

  const test: TestPlatform = {
    platform,
    opsUrl: platform.opsUrl,
    config,
    url,
    dataDir,
    api(pathname, init) {
      const headers: Record<string, string> = {};
      if (init?.key) headers.authorization = `Bearer ${init.key}`;
      const { key: _key, ...rest } = init ?? {};
      return fetch(`${url}/api/v1${pathname}`, withJson(rest, headers));
    },
    admin(pathname, init) {
      return fetch(`${url}/admin/v1${pathname}`, withJson(init, { authorization: `Bearer ${ADMIN_TOKEN}` }));
    },
    async bootstrap(input = {}) {
      const res = await test.admin('/bootstrap', { method: 'POST', json: { name: input.name ?? 'Test account', kind: input.kind ?? 'live', grant: input.grant ?? {} } });
      if (res.status !== 201) throw new Error(`bootstrap failed: ${res.status} ${await res.text()}`);
      return (await res.json()) as { accountId: string; grantId: string; keyId: string; apiKey: string };
    },
    async stop() {
      const undocumented = unwatch();
      await platform.stop();
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      if (undocumented.length > 0) throw new UndocumentedResponse(undocumented);
    },
  };
  return test;
}

/** The services core's request pipeline runs on, taken from a running platform (to serve a test's own route through it). */
export async function pipelineServicesOf(p: TestPlatform): Promise<PipelineServices> {
  const service = p.platform.service.bind(p.platform);
  return {
    config: await service(coreServices.config),
    logger: await service(coreServices.logger),
    metrics: await service(coreServices.metrics),
    keys: await service(coreServices.keys),
    counters: await service(coreServices.counters),
    billing: await service(coreServices.billing),
    bus: await service(coreServices.bus),
    spill: (await service(coreServices.documents)).spill,
  };
}
