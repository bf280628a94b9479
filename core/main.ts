import { loadConfig, ConfigError } from '../config/load.ts';
import { startPlatform, type Platform } from './kernel/platform.ts';

/**
 * The process entry point (`node dist/core/main.js`, or `npm start`):
 * validates configuration, starts the configured roles, and stops gracefully
 * on SIGTERM or SIGINT within SHUTDOWN_TIMEOUT_SECONDS (readiness false at
 * once, in-flight work settled, exit 0). A crash (an unhandled rejection or
 * exception) is logged and drained the same way, then exits 1.
 */
function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 78);
    throw err;
  }
  let platform: Platform;
  try {
    platform = await startPlatform(config);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 78);
    throw err;
  }
  if (platform.url) process.stdout.write(`Vietnamese TTS API listening on ${platform.url}/api/v1 (roles: ${config.roles.join(', ')})\n`);

  let exiting = false;
  const shutdown = async (reason: string, exitCode: number) => {
    if (exiting) return;
    exiting = true;
    process.stdout.write(`${reason}: draining (at most ${config.shutdownTimeoutSeconds} s)...\n`);
    // A drain that hangs past the deadline must not keep the pod alive until SIGKILL.
    setTimeout(() => fail(`shutdown did not finish within ${config.shutdownTimeoutSeconds} s; exiting`, 1), config.shutdownTimeoutSeconds * 1000 + 2000).unref();
    const clean = await platform.stop();
    process.exit(clean ? exitCode : Math.max(exitCode, 1));
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM received', 0));
  process.once('SIGINT', () => void shutdown('SIGINT received', 0));
  const crash = (kind: string) => (err: unknown) => {
    process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level: 'error', msg: kind, err: { message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack } })}\n`);
    void shutdown(kind, 1);
  };
  process.on('unhandledRejection', crash('unhandled promise rejection'));
  process.on('uncaughtException', crash('uncaught exception'));
}

main().catch((err) => fail(`start-up failed: ${(err as Error).stack ?? err}`, 1));
