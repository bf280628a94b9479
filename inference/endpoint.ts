import type { AddressInfo } from 'node:net';
import type { CoreServices } from '../core/plugin.ts';
import { createInferenceServer } from './server.ts';

/**
 * The inference role's internal streaming endpoint (`POST /internal/synthesize`),
 * served when INFERENCE_PORT is set: API processes of the distributed
 * deployment reach the engine through it (INFERENCE_URL). The all-in-one
 * process calls the engine in process and leaves it off.
 */
export async function startInferenceEndpoint(services: CoreServices): Promise<() => Promise<void>> {
  const port = services.config.inferencePort;
  if (port === null) return async () => {};
  const server = createInferenceServer(services.engine, {
    onError: (err) => services.logger.warn('inference endpoint error', { err: err as Error }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, services.config.host, () => resolve());
  });
  services.logger.info('inference endpoint listening', { port: (server.address() as AddressInfo).port });
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}
