import type { ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildPlatform, type ChildPlatform } from './child-platform.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';
import type { Stack, StackUse } from './stacks.ts';

/**
 * The set of a crash test: one stack and one data directory, a platform in
 * a child process (to be killed the hard way), and the platform that
 * restarts on the same data. Whatever was started is torn down after the test.
 */
export interface CrashScene {
  use: StackUse;
  dataDir: string;
  /** the platform to kill, as `npm start` runs it */
  start(env: Record<string, string>): Promise<ChildPlatform>;
  /** the platform after the crash, in this process, on the same data */
  restart(env: Record<string, string>): Promise<TestPlatform>;
}

export function crashScene(t: ExecutionContext, stack: Stack, prefix: string): CrashScene {
  const use = stack.use();
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  let child: ChildPlatform | null = null;
  let restarted: TestPlatform | null = null;
  t.teardown(async () => {
    await child?.kill();
    await restarted?.stop();
    await use.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    use,
    dataDir,
    start: async (env) => (child = await startChildPlatform(env)),
    restart: async (env) => (restarted = await startTestPlatform(env)),
  };
}
