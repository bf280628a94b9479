import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../config/load.ts';

/** Why an address could not be bound, in the operator's terms; null for other errors. */
const BIND_FAILURES: Record<string, string> = {
  EADDRINUSE: 'is already in use by another process',
  EACCES: 'needs privileges this process does not have',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/**
 * Listens and resolves the port actually bound (0 picks a free one). An
 * address that cannot be bound is a configuration error naming `setting`
 * (exit 78, as other bad settings), not a crash with a stack trace.
 */
export function listen(server: http.Server, port: number, host: string, setting = 'PORT'): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const why = BIND_FAILURES[err.code ?? ''];
      reject(why ? new ConfigError(`${host}:${port} ${why}: choose another ${setting} (or HOST).`) : err);
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting and resolves once every connection is gone; `now` also drops open ones. */
export function closeServer(server: http.Server, now = false): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
    if (now) server.closeAllConnections();
  });
}
