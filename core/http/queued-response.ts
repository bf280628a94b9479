import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes the responses that wait their turn on a connection that has gone.
 *
 * A client may send its next request before the answer to the previous one
 * has ended (HTTP/1.1 pipelining, which load generators and some proxies
 * do). Node then queues the new response: it has no socket until the one
 * ahead of it finishes, and Node 20 never closes it when the connection
 * drops (newer Node does). Everything that waits for the response's 'close'
 * (the drain's count of open requests, the log phase and its outcome event,
 * a speech run's client-gone signal and its back-pressure wait) would wait
 * until shutdown, holding the engine, the synthesis slot and the settlement
 * of the money.
 *
 * So when a connection closes, each of its responses that has no socket and
 * has not finished is closed here as Node closes the others: destroyed, then
 * 'close'. A response that holds the socket, or has finished, gets its
 * 'close' from Node, and is left alone. One listener per connection, however
 * deep the pipeline.
 */
const openResponses = new WeakMap<Socket, Set<ServerResponse>>();

export function closeWhenConnectionDrops(req: IncomingMessage, res: ServerResponse): void {
  const connection = req.socket;
  if (!connection) return;
  let open = openResponses.get(connection);
  if (!open) {
    const responses = new Set<ServerResponse>();
    openResponses.set(connection, responses);
    connection.once('close', () => {
      for (const queued of responses) {
        if (queued.socket || queued.writableFinished) continue;
        queued.destroy();
        queued.emit('close');
      }
      responses.clear();
    });
    open = responses;
  }
  const responses = open;
  responses.add(res);
  res.once('close', () => responses.delete(res));
}
