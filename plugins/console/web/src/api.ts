/**
 * The console's two ways to the server: the public API under /api/v1, with
 * the short-lived token of the signed-in session (refreshed before it runs
 * out), and the console's own session routes under /console/api, with the
 * CSRF token of this browser and session.
 */

export interface User {
  id: string;
  email: string;
  name: string | null;
  accountId: string;
}

export interface Session {
  signedIn: boolean;
  csrf: string;
  user?: User;
  sessionExpiresAt?: string;
  api?: { token: string; expiresAt: string };
}

/** A refusal, with what the envelope said. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
    readonly body: Record<string, unknown>,
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
  }
}

let session: Session = { signedIn: false, csrf: '' };
let refreshing: Promise<Session> | null = null;
const signedOutListeners: Array<() => void> = [];

export const currentSession = () => session;
export const onSignedOut = (listener: () => void) => void signedOutListeners.push(listener);

/**
 * The session ended (signed out in another tab, expired): it is forgotten at
 * once, before the shell is told, so no page (the sign-in page least of all)
 * acts on the signed-in state still in memory.
 */
function sessionEnded(): void {
  if (session.signedIn) session = { signedIn: false, csrf: '' };
  signedOutListeners.forEach((l) => l());
}

export async function loadSession(): Promise<Session> {
  refreshing ??= (async () => {
    try {
      const res = await fetch('/console/api/session', { credentials: 'same-origin', cache: 'no-store' });
      if (!res.ok) throw await failure(res);
      session = (await res.json()) as Session;
      return session;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

export function setSession(next: Session): void {
  session = next;
}

async function failure(res: Response): Promise<ApiFailure> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON (an edge proxy's page): the status says enough
  }
  // The native envelope, or the compatible one of /audio/speech ({ error: { message, type } }).
  const compat = typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : null;
  const raw = compat ? compat.message : body.message;
  const message = Array.isArray(raw) ? raw.join(' ') : typeof raw === 'string' ? raw : `${res.status} ${res.statusText}`;
  const retry = res.headers.get('retry-after');
  const code = typeof body.code === 'string' ? body.code : compat && typeof compat.type === 'string' ? compat.type : null;
  return new ApiFailure(res.status, message, code, body, retry && /^\d+$/.test(retry) ? Number(retry) : null);
}

/** The API token, fresh for at least another minute. */
async function apiToken(): Promise<string> {
  const expires = session.api ? Date.parse(session.api.expiresAt) : 0;
  if (!session.signedIn || expires - Date.now() < 60_000) await loadSession();
  if (!session.signedIn || !session.api) {
    sessionEnded();
    throw new ApiFailure(401, 'Signed out.', 'SIGN_IN_REQUIRED', {}, null);
  }
  return session.api.token;
}

export type RequestOptions = Omit<RequestInit, 'body'> & { json?: unknown; body?: BodyInit | null };

function withJson(init: RequestOptions, headers: Headers): RequestInit {
  const { json, ...rest } = init;
  if (json !== undefined) headers.set('content-type', 'application/json');
  return { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body ?? null, credentials: 'same-origin' };
}

/** A call to `/api/v1<path>` as the signed-in user; throws ApiFailure on a refusal. */
export async function api(path: string, init: RequestOptions = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${await apiToken()}`);
    const res = await fetch(`/api/v1${path}`, withJson(init, headers));
    if (res.ok) return res;
    const refusal = await failure(res);
    // A token that ended (sign-out elsewhere, expiry while asleep): ask for a fresh one once.
    if (res.status === 401 && attempt === 0) {
      await loadSession();
      continue;
    }
    if (res.status === 401) sessionEnded();
    throw refusal;
  }
}

export async function apiJson<T>(path: string, init: RequestOptions = {}): Promise<T> {
  return (await (await api(path, init)).json()) as T;
}

/** A call to one of the console's session routes (`/console/api<path>`). */
export async function consoleApi<T>(path: string, init: RequestOptions = {}): Promise<T> {
  const headers = new Headers(init.headers);
  if (init.method && init.method !== 'GET') headers.set('x-csrf-token', session.csrf);
  const res = await fetch(`/console/api${path}`, withJson(init, headers));
  if (res.status === 401) {
    const refusal = await failure(res);
    if (refusal.code === 'SIGN_IN_REQUIRED') sessionEnded();
    throw refusal;
  }
  if (!res.ok) throw await failure(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** Any same-origin JSON route outside both (the OAuth server's connected apps); `null` when it is not there (404). */
export async function optionalJson<T>(url: string, init: RequestOptions = {}): Promise<T | null> {
  const res = await fetch(url, withJson(init, new Headers(init.headers)));
  if (res.status === 404) return null;
  if (!res.ok) throw await failure(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export { failure as readFailure };
