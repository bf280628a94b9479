import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../config/load.ts';

/** Why an address could not be bound, in the operator's terms; null for other errors. */
const BIND_FAILURES: Record<string, string> = {
  EADDRINUSE: 'is already in use by another process',
  EACCES: 'needs privileges this process does not have',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** Why HOST names no address to bind: the name lookup failed. */
const LOOKUP_FAILURES: Record<string, string> = {
  ENOTFOUND: 'is not a name this machine can resolve',
  EAI_AGAIN: 'could not be resolved (the name server did not answer)',
};

/** The operator's message for an error of listen(), or null when it is not the address's fault. */
function bindFailure(err: NodeJS.ErrnoException, port: number, host: string, setting: string): string | null {
  const lookup = LOOKUP_FAILURES[err.code ?? ''];
  if (lookup) return `HOST ${JSON.stringify(host)} ${lookup} (${err.code}): set HOST to an address or name of this machine (0.0.0.0: every interface).`;
  const why = BIND_FAILURES[err.code ?? ''];
  return why ? `${host}:${port} ${why}: choose another ${setting} (or HOST).` : null;
}

/**
 * Listens and resolves the port actually bound (0 picks a free one). An
 * address that cannot be bound, or a HOST that names none, is a configuration
 * error naming the setting (exit 78, as other bad settings), not a crash with
 * a stack trace. `setting` names the port variable of this listener.
 */
export function listen(server: http.Server, port: number, host: string, setting = 'PORT'): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const message = bindFailure(err, port, host, setting);
      reject(message ? new ConfigError(message) : err);
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
