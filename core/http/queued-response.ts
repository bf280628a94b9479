import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Closes a response that waits its turn on a connection that has gone.
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
 * So when the request's connection closes while its response has no socket
 * and has not finished, the response is closed here as Node closes the
 * others: destroyed, then 'close'. A response that holds the socket, or has
 * finished, gets its 'close' from Node, and is left alone.
 */
export function closeWhenConnectionDrops(req: IncomingMessage, res: ServerResponse): void {
  const connection = req.socket;
  if (!connection) return;
  let closed = false;
  const onConnectionClose = () => {
    if (closed || res.socket || res.writableFinished) return;
    closed = true;
    res.destroy();
    res.emit('close');
  };
  res.once('close', () => {
    closed = true;
    connection.off('close', onConnectionClose);
  });
  connection.once('close', onConnectionClose);
}
