/**
 * Engine health as readiness reads it: the last known answer, refreshed in
 * the background when older than `maxAgeMs`. A busy engine (all cores
 * synthesising) answers its ping late; readiness must not flap for that, so
 * a probe never waits on the engine once a first answer exists.
 */
export function cachedHealth(ping: () => Promise<void>, maxAgeMs: number): () => Promise<void> {
  let last: { at: number; error: Error | null } | null = null;
  let refreshing: Promise<void> | null = null;
  const refresh = () => {
    refreshing ??= ping()
      .then(() => { last = { at: Date.now(), error: null }; })
      .catch((err: Error) => { last = { at: Date.now(), error: err }; })
      .finally(() => { refreshing = null; });
    return refreshing;
  };
  return async () => {
    if (!last) await refresh();
    else if (Date.now() - last.at > maxAgeMs) void refresh();
    if (last!.error) throw last!.error;
  };
}
