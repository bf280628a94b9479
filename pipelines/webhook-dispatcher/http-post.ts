import https from 'node:https';
import tls, { type TLSSocket } from 'node:tls';
import { isIP } from 'node:net';
import type { WebhookError } from '../../core/ports/webhooks.ts';
import type { CheckedDestination } from '../../core/net/destination.ts';

/**
 * One HTTPS POST of a delivery, classified into SPEC's `lastError`
 * vocabulary. The socket goes to the address the destination check pinned
 * (never a fresh DNS answer); the certificate and SNI are still checked
 * against the URL's host name. Redirects are never followed (node:https does
 * not follow them; a 3xx is `redirect_refused`). At most 64 KB of the answer
 * is read, counted and dropped.
 */

export interface PostRequest {
  destination: CheckedDestination;
  body: Buffer;
  headers: Record<string, string>;
  /** SPEC: a 2xx within 10 s */
  totalTimeoutMs: number;
  /** TCP + TLS must be done within this; at most totalTimeoutMs in effect */
  connectTimeoutMs: number;
}

export type PostResult =
  | { ok: true; statusCode: number; durationMs: number }
  | { ok: false; error: WebhookError; statusCode: number | null; durationMs: number; detail: string };

export type Transport = (request: PostRequest) => Promise<PostResult>;

export const MAX_RESPONSE_BYTES = 64 * 1024;

type Phase = 'connecting' | 'handshaking' | 'waiting' | 'reading';

export function statusError(statusCode: number): WebhookError | null {
  if (statusCode >= 200 && statusCode < 300) return null;
  if (statusCode >= 300 && statusCode < 400) return 'redirect_refused';
  if (statusCode >= 400 && statusCode < 500) return 'http_4xx';
  return 'http_5xx';
}

/** A socket error, by the phase it happened in: anything that breaks the handshake is a TLS failure. */
export function socketError(err: NodeJS.ErrnoException, phase: Phase): WebhookError {
  const code = err.code ?? '';
  if (phase === 'handshaking' || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT')) return 'tls_failure';
  if (code === 'ETIMEDOUT') return phase === 'connecting' ? 'connect_timeout' : 'response_timeout';
  // Refused, unreachable, or dropped by the peer before answering: the vocabulary has one word for "would not take it".
  return 'connection_refused';
}

export interface HttpsTransport {
  post: Transport;
  close(): void;
}

export function createHttpsTransport(options: { ca: string | null; maxSocketsPerHost: number; maxTotalSockets: number }): HttpsTransport {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: options.maxSocketsPerHost,
    maxTotalSockets: options.maxTotalSockets,
    // Idle pooled sockets are dropped after this; active requests keep their own deadline.
    timeout: 30_000,
    // One context built once: a `ca` option would replace the system roots, and would be re-read into the
    // agent's pool key and a fresh secure context on every request. The test CA is added to the roots.
    secureContext: options.ca ? tls.createSecureContext({ ca: [...tls.rootCertificates, options.ca] }) : undefined,
  });

  const post: Transport = (request) =>
    new Promise((resolve) => {
      const { destination: d, body } = request;
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let phase: Phase = 'connecting';
      let statusCode: number | null = null;
      let settled = false;
      let detach = () => {};

      const settle = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(totalTimer);
        clearTimeout(connectTimer);
        detach();
        resolve(result);
      };
      const fromStatus = (): PostResult => {
        const error = statusError(statusCode!);
        return error ? { ok: false, error, statusCode, durationMs: elapsed(), detail: `HTTP ${statusCode}` } : { ok: true, statusCode: statusCode!, durationMs: elapsed() };
      };
      const fail = (error: WebhookError, detail: string) => settle({ ok: false, error, statusCode, durationMs: elapsed(), detail });

      // A fully qualified `name.` is the same host; SNI and certificate names never carry the final dot.
      const serverName = d.hostname.replace(/\.$/, '');
      const req = https.request({
        host: d.address,
        family: d.family,
        port: d.port,
        method: 'POST',
        path: `${d.url.pathname}${d.url.search}`,
        // SNI may not carry an address (RFC 6066); identity is checked against the URL's host either way.
        servername: isIP(serverName) ? undefined : serverName,
        checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName, cert),
        headers: { ...request.headers, host: d.url.host, 'content-length': String(body.length) },
        agent,
      });

      const totalTimer = setTimeout(() => {
        if (phase === 'reading') settle(fromStatus());
        else fail(phase === 'waiting' ? 'response_timeout' : 'connect_timeout', `no answer within ${request.totalTimeoutMs} ms`);
        req.destroy();
      }, request.totalTimeoutMs);
      const connectTimer = setTimeout(() => {
        if (phase !== 'connecting' && phase !== 'handshaking') return;
        fail('connect_timeout', `connection not established within ${request.connectTimeoutMs} ms`);
        req.destroy();
      }, Math.min(request.connectTimeoutMs, request.totalTimeoutMs));

      req.on('socket', (socket) => {
        // A pooled socket can be handed over without `req.reusedSocket` being set (queued requests), so the
        // socket's own state decides; listeners are removed at the end, or each reuse would leave two behind.
        // `authorized` turns true only once the handshake and the certificate check are done.
        if ((socket as TLSSocket).authorized) {
          phase = 'waiting';
          return;
        }
        phase = socket.connecting ? 'connecting' : 'handshaking';
        const connected = () => {
          if (phase === 'connecting') phase = 'handshaking';
        };
        const secured = () => {
          phase = 'waiting';
        };
        socket.once('connect', connected);
        socket.once('secureConnect', secured);
        detach = () => {
          socket.off('connect', connected);
          socket.off('secureConnect', secured);
        };
      });
      req.on('response', (res) => {
        statusCode = res.statusCode ?? 0;
        phase = 'reading';
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) {
            settle(fromStatus());
            res.destroy();
          }
        });
        res.on('end', () => settle(fromStatus()));
        res.on('error', () => settle(fromStatus()));
        res.on('aborted', () => settle(fromStatus()));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (statusCode !== null) settle(fromStatus());
        else fail(socketError(err, phase), err.code ? `${err.code}: ${err.message}` : err.message);
      });
      req.end(body);
    });

  return { post, close: () => agent.destroy() };
}
