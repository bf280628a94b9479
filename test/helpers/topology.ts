import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildPlatform, type ChildPlatform } from './child-platform.ts';
import { freePort } from './servers/java.ts';
import type { BackboneServers } from './backbone.ts';

/**
 * The distributed topology on loopback: every role in processes of its own
 * (what `helm/vieneu-tts` deploys), all on Kafka, MongoDB, ClickHouse and
 * Redis. API processes reach the engine through the inference processes'
 * internal endpoints (INFERENCE_URL lists them all); the inference
 * processes form one consumer group on `tts.jobs`. Used by the topology
 * test and by `npm run stack`.
 */

export type Role = 'api' | 'inference' | 'pipelines';

export interface RoleProcess {
  role: Role;
  /** e.g. "inference-2" */
  name: string;
  /** the settings it was started with, beyond the fleet's common ones */
  env: Record<string, string>;
  child: ChildPlatform;
  /** API base URL (api processes) */
  url: string | null;
  /** internal synthesis endpoint (inference processes) */
  inferenceUrl: string | null;
  opsUrl: string;
}

export interface TopologyOptions {
  servers: BackboneServers;
  apis?: number;
  inference?: number;
  pipelines?: number;
  /** API ports (default: free ports); the first is PUBLIC_BASE_URL unless `env` sets it */
  apiPorts?: number[];
  /** settings for every process (rates, leases, webhook switches, LOG_LEVEL...) */
  env?: Record<string, string>;
  adminToken?: string;
  /** how long one process may take to start (default 120 s: the tests start five at once on a loaded machine) */
  startTimeoutMs?: number;
  /** sees every process's output from its first byte (start-up warnings included); `name` is e.g. "inference-2" */
  onOutput?: (name: string, chunk: Buffer, stream: 'stdout' | 'stderr') => void;
}

export interface Topology {
  /** the settings every process shares */
  env: Record<string, string>;
  adminToken: string;
  apis: RoleProcess[];
  inference: RoleProcess[];
  pipelines: RoleProcess[];
  all(): RoleProcess[];
  /** fetch on API process `i` relative to /api/v1 */
  api(i: number, pathname: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  /** fetch on the admin API (first API process) */
  admin(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** a fresh account with a grant and a live key */
  bootstrap(name: string, tokens: number): Promise<{ accountId: string; grantId: string; keyId: string; apiKey: string }>;
  /** SIGTERM every process still running (SIGKILL after `graceMs`) and remove the data directory */
  stop(graceMs?: number): Promise<void>;
}

const DEFAULT_ADMIN_TOKEN = 'topology-admin-token-0123456789';

/** The fleet's shared settings: the production adapter of every port, one signing secret. */
export function fleetEnv(servers: BackboneServers, dataDir: string, adminToken: string): Record<string, string> {
  return {
    KAFKA_BROKERS: servers.kafka.brokers,
    MONGODB_URL: servers.mongo.url,
    MONGODB_DB: servers.mongo.db,
    CLICKHOUSE_URL: servers.clickhouse.url,
    CLICKHOUSE_DATABASE: servers.clickhouse.database,
    REDIS_URL: servers.redis.url,
    // Every process of a fleet signs and checks download links with the same key.
    URL_SIGNING_SECRET: 'topology-url-signing-secret-0123456789',
    ADMIN_TOKEN: adminToken,
    // Nothing may land here: the distributed mode never opens the embedded file (the test checks it).
    DATA_DIR: dataDir,
  };
}

function withJson(init: (RequestInit & { json?: unknown; key?: string }) | undefined, headers: Record<string, string>): RequestInit {
  const { json, key, ...rest } = init ?? {};
  const h: Record<string, string> = { ...headers, ...(rest.headers as Record<string, string> | undefined) };
  if (key) h.authorization = `Bearer ${key}`;
  if (json !== undefined) h['content-type'] = 'application/json';
  return { ...rest, headers: h, body: json !== undefined ? JSON.stringify(json) : rest.body };
}

export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const counts = { api: options.apis ?? 2, inference: options.inference ?? 2, pipelines: options.pipelines ?? 1 };
  const adminToken = options.adminToken ?? DEFAULT_ADMIN_TOKEN;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-topology-'));
  const apiPorts = options.apiPorts ?? (await Promise.all(Array.from({ length: counts.api }, () => freePort())));
  const inferencePorts = await Promise.all(Array.from({ length: counts.inference }, () => freePort()));
  const inferenceUrls = inferencePorts.map((port) => `http://127.0.0.1:${port}`);
  const env: Record<string, string> = {
    ...fleetEnv(options.servers, dataDir, adminToken),
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPorts[0]}`,
    ...options.env,
  };
  const started: RoleProcess[] = [];
  const timeoutMs = options.startTimeoutMs ?? 120_000;

  async function start(role: Role, index: number, own: Record<string, string>): Promise<RoleProcess> {
    const name = `${role}-${index + 1}`;
    const onOutput = options.onOutput;
    const child = await startChildPlatform({ ...env, ROLES: role, ...own }, timeoutMs, onOutput && ((chunk, stream) => onOutput(name, chunk, stream)));
    const proc: RoleProcess = {
      role, name, env: own, child, url: child.url,
      inferenceUrl: role === 'inference' ? inferenceUrls[index]! : null, opsUrl: child.opsUrl,
    };
    started.push(proc);
    return proc;
  }

  const stop = async (graceMs = 15_000) => {
    await Promise.all(started.map(async ({ child }) => {
      const timer = setTimeout(() => void child.kill('SIGKILL'), graceMs);
      await child.kill('SIGTERM');
      clearTimeout(timer);
    }));
    rmSync(dataDir, { recursive: true, force: true });
  };

  /** Starts side by side; when one fails, waits for the rest (so stop() finds every process) and throws. */
  async function startAll(starts: Array<Promise<RoleProcess>>): Promise<RoleProcess[]> {
    const results = await Promise.allSettled(starts);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<RoleProcess>).value);
  }

  try {
    // Workers first, so the API processes find their engine ready.
    const workers = await startAll([
      ...inferencePorts.map((port, i) => start('inference', i, { INFERENCE_PORT: String(port) })),
      ...Array.from({ length: counts.pipelines }, (_, i) => start('pipelines', i, {})),
    ]);
    const inference = workers.filter((w) => w.role === 'inference');
    const pipelines = workers.filter((w) => w.role === 'pipelines');
    const apis = await startAll(apiPorts.map((port, i) => start('api', i, { PORT: String(port), INFERENCE_URL: inferenceUrls.join(',') })));
    const topology: Topology = {
      env,
      adminToken,
      apis,
      inference,
      pipelines,
      all: () => [...apis, ...inference, ...pipelines],
      api: (i, pathname, init) => fetch(`${apis[i % apis.length]!.url}/api/v1${pathname}`, withJson(init, {})),
      admin: (pathname, init) => fetch(`${apis[0]!.url}/admin/v1${pathname}`, withJson(init, { authorization: `Bearer ${adminToken}` })),
      async bootstrap(name, tokens) {
        const res = await topology.admin('/bootstrap', { method: 'POST', json: { name, grant: { totalTokens: tokens } } });
        if (res.status !== 201) throw new Error(`bootstrap failed: ${res.status} ${await res.text()}`);
        return (await res.json()) as { accountId: string; grantId: string; keyId: string; apiKey: string };
      },
      stop,
    };
    return topology;
  } catch (error) {
    await stop(2000);
    throw error;
  }
}
