import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { bodyReadRefusal } from '../../core/http/body-read.ts';
import { ApiError } from '../../core/errors.ts';

/**
 * The route pipeline reads bodies with koa-body after authentication, which
 * on MongoDB or Redis takes a round trip: a client that closes its request
 * meanwhile leaves a request that can no longer be read. That is the
 * client's doing (a 400 nobody receives), not an internal error to log.
 */
async function bodyErrorOf(): Promise<{ err: unknown; destroyed: boolean }> {
  const app = new Koa();
  const seen = new Promise<{ err: unknown; destroyed: boolean }>((resolve) => {
    app.use(async (ctx) => {
      const parse = koaBody({ json: true, jsonStrict: true });
      // The client is gone before the body is read (as after a slow authentication).
      if (!ctx.req.destroyed) await new Promise((r) => ctx.req.once('close', r));
      try {
        await parse(ctx, async () => {});
        resolve({ err: null, destroyed: ctx.req.destroyed });
      } catch (err) {
        resolve({ err, destroyed: ctx.req.destroyed });
      }
      ctx.body = { ok: true };
    });
  });
  const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
  // The cut request is also a parse error of the connection; Node reports it here.
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    // Headers promising a body, then the connection closed before it is sent.
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n');
    socket.destroy();
    return await seen;
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

test('a body the client closed before it was read is a 400 of the client, not an internal error', async (t) => {
  const { err, destroyed } = await bodyErrorOf();
  t.true(destroyed);
  t.truthy(err, 'koa-body cannot read a request that is gone');
  const refusal = bodyReadRefusal(err, { destroyed });
  t.true(refusal instanceof ApiError);
  t.is((refusal as ApiError).status, 400);
});

test('the same read error on a request still open stays ours (a 500)', async (t) => {
  const { err } = await bodyErrorOf();
  t.is(bodyReadRefusal(err, { destroyed: false }), err);
  const other = new Error('disk full');
  t.is(bodyReadRefusal(other, { destroyed: true }), other, 'only a failed body read is the client\'s doing');
});
