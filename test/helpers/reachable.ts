import { spawnSync } from 'node:child_process';

/**
 * Whether `url` answers 2xx within 2 s. Synchronous (a child process), so a
 * suite can decide at load time whether to declare its tests or skip them:
 * ava wants tests declared before the first await.
 */
export function reachable(url: string): boolean {
  const probe = `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 5000 }).status === 0;
}
