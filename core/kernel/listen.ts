import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and resolves the port actually bound (0 picks a free one). */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
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
