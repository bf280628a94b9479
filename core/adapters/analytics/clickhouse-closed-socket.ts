/**
 * A kept-alive socket that ClickHouse closed (its keep-alive timeout is 3 s
 * before 23.11) can still be handed out by the client's pool: the pool dates
 * a socket from when this process read the answer, and on a busy event loop
 * that is up to a second after the server sent it, so the server's timer
 * ends first. The request then dies on the dead socket (EPIPE while an
 * insert's body is written, ECONNRESET or a hang-up otherwise) although the
 * server is fine; the usage aggregator's bench met one such batch a round.
 * Such a request is sent once more on a fresh socket. Only what may run
 * twice goes through here: reads, and the usage inserts, whose repeat lands
 * identical rows that the tables collapse and `settle` subtracts, as for a
 * redelivered batch. Schema and backfill statements are not repeated (the
 * backfill's marker table would then say it was already done).
 */
const CLOSED_SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET']);

/** fetch (the external-data look-ups) reports the socket's error as its `cause`. */
export function isClosedSocket(error: unknown): boolean {
  let err = error as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; err && depth < 4; depth += 1, err = err.cause as typeof err) {
    if ((typeof err.code === 'string' && CLOSED_SOCKET_CODES.has(err.code)) || err.message === 'socket hang up') return true;
  }
  return false;
}

/** Runs `request`, and once more when it failed on a socket the server had closed. */
export async function onceMoreIfClosedSocket<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (!isClosedSocket(error)) throw error;
    return request();
  }
}
