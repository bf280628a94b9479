import type { Config } from '../config/load.ts';
import type { SpeechEngine } from '../core/ports/engine.ts';
import type { Logger } from '../core/logger.ts';
import type { Lifecycle } from '../core/services.ts';
import { listen } from '../core/kernel/listen.ts';
import { createInferenceServer } from './server.ts';

export interface EndpointDeps {
  config: Config;
  engine: SpeechEngine;
  logger: Logger;
  lifecycle: Lifecycle;
}

/**
 * The inference role's internal streaming endpoint (`POST /internal/synthesize`),
 * served when INFERENCE_PORT is set: API processes of the distributed
 * deployment reach the engine through it (INFERENCE_URL). The all-in-one
 * process calls the engine in process and leaves it off. On shutdown it stops
 * accepting and lets streams in flight finish until the deadline.
 */
export async function startInferenceEndpoint(deps: EndpointDeps): Promise<() => Promise<void>> {
  const port = deps.config.inferencePort;
  if (port === null) return async () => {};
  const server = createInferenceServer(deps.engine, {
    onError: (err) => deps.logger.warn('inference endpoint error', { err: err as Error }),
  });
  // A port in use (or a HOST of another machine) stops start-up with exit 78 naming INFERENCE_PORT, as PORT and OPS_PORT do.
  const bound = await listen(server, port, deps.config.host, 'INFERENCE_PORT');
  deps.logger.info('inference endpoint listening', { port: bound });
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      const deadline = deps.lifecycle.deadline();
      const cut = setTimeout(() => server.closeAllConnections(), deadline === null ? 0 : Math.max(0, deadline - Date.now() - 1000));
      server.once('close', () => clearTimeout(cut));
    });
}
