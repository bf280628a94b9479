/** Polls `check` until it returns a truthy value or the time runs out. */
export async function waitFor<T>(check: () => Promise<T> | T, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: T;
  do {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  } while (Date.now() < deadline);
  throw new Error(`timed out waiting for ${options.what ?? 'condition'}`);
}
