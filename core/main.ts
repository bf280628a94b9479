import { loadConfig, ConfigError } from '../config/load.ts';
import { startPlatform } from './kernel/platform.ts';

/** `npm start`: validates configuration, starts the configured roles, stops cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const platform = await startPlatform(config);
  if (platform.url) process.stdout.write(`Vietnamese TTS API listening on ${platform.url}/api/v1 (roles: ${config.roles.join(', ')})\n`);
  const shutdown = async (signal: string) => {
    process.stdout.write(`${signal} received, draining...\n`);
    await platform.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`start-up failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
