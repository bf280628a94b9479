import { STATUS_CODES } from 'node:http';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { nativeBody } from './envelopes.ts';

/**
 * Requests Node refuses before Koa sees them (headers or URL over 16 KB,
 * malformed HTTP) get the native envelope and an X-Request-Id like every
 * other answer, instead of Node's bare status line.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (err.code === 'ECONNRESET')) return void socket.destroy();
    const error = err.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(431, 'The request line and headers together exceed 16 KB. Send long input in the body.', { code: 'HEADERS_TOO_LARGE' })
      // Node's requestTimeout / headersTimeout: a client too slow to send its request, not one that sent bad HTTP.
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(408, 'The request did not arrive in time: its headers or body stopped coming. Send it again in one go.', { code: 'REQUEST_TIMEOUT' })
        : new ApiError(400, 'The request is not valid HTTP.', { code: 'BAD_REQUEST' });
    const requestId = randomUUID();
    const body = JSON.stringify(nativeBody(error, requestId));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
