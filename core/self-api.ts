/**
 * The platform's own API as a feature can call it: a plugin that offers the
 * API in another shape (the MCP server) sends its requests through the very
 * same request phases (authentication, rate limits, billing, outcome events)
 * by calling this process's API listener over loopback, with the caller's
 * own credential.
 */
export interface SelfApi {
  /** `{base_url}`: PUBLIC_BASE_URL, or this process's API listener when it is unset */
  publicBaseUrl(): string;
  /** `fetch` of a path (e.g. `/api/v1/balance`) on this process's API listener */
  fetch(pathname: string, init?: RequestInit): Promise<Response>;
}

export interface BindableSelfApi extends SelfApi {
  /** called by the kernel once the API listener is up */
  bind(localUrl: string): void;
}

export function createSelfApi(publicBaseUrl: string | null): BindableSelfApi {
  let local: string | null = null;
  const needLocal = () => {
    if (!local) throw new Error('the API listener is not running in this process (no api role, or not started yet)');
    return local;
  };
  return {
    publicBaseUrl: () => (publicBaseUrl ?? needLocal()).replace(/\/$/, ''),
    fetch: (pathname, init) => fetch(needLocal() + pathname, init),
    bind(localUrl) {
      local = localUrl.replace(/\/$/, '');
    },
  };
}
