import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The lowest port the kernel hands out for `listen(0)`; ports below it are only ever taken by asking for them. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 2048) return low;
  } catch {
    // not Linux: the IANA range starts at 49152
  }
  return 49152;
}

async function isFree(port: number): Promise<boolean> {
  const server = net.createServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

/**
 * A port on 127.0.0.1 that nothing listens on, and that stays so: chosen
 * below the ephemeral range. A port bound with `listen(0)` and released was
 * handed straight back to the next server a concurrent test started, which
 * then answered where the test expected a refused connection.
 */
export async function closedPort(): Promise<number> {
  const top = Math.min(ephemeralLow(), 32768);
  const bottom = Math.max(1024, top - 12768);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom));
    if (await isFree(port)) return port;
  }
  throw new Error('closedPort: no free port found below the ephemeral range');
}
