import test from 'ava';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Drain } from '../../core/http/drain.ts';

/**
 * The drain's deadline (core/http/drain.ts): a response it ended whose client
 * reads too slowly to take the rest does not keep the shutdown waiting; one
 * that has not begun its body is left to its handler; what is left is named.
 */
async function serve(drain: Drain, handler: (res: http.ServerResponse) => void): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const done = drain.begin();
    res.once('close', done);
    handler(res);
  });
  drain.watch(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A client that sends one request and never reads the answer. */
function stalledClient(port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

test('a response ended at the deadline that its client does not read is closed after the grace, and idle resolves true', async (t) => {
  const drain = new Drain();
  const chunk = Buffer.alloc(256 * 1024);
  const { server } = await serve(drain, (res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    // Far more than the socket buffers hold: the end waits on the client.
    const pump = () => {
      while (!drain.stopping.aborted && res.write(chunk));
      if (drain.stopping.aborted) res.end();
      else res.once('drain', pump);
    };
    drain.stopping.addEventListener('abort', () => res.end(), { once: true });
    pump();
  });
  t.teardown(() => server.close());
  const client = stalledClient((server.address() as AddressInfo).port);
  t.teardown(() => client.destroy());
  await new Promise((r) => setTimeout(r, 300));
  t.is(drain.openRequests, 1);
  t.false(await drain.idle(200), 'the client holds the response open');

  const started = Date.now();
  drain.interrupt(100);
  t.true(await drain.idle(3000), drain.describe());
  t.true(Date.now() - started < 1500, `closed after ${Date.now() - started} ms`);
  t.is(drain.describe(), 'nothing in flight');
});

test('a response that has not begun its body keeps its connection; describe() names what is left', async (t) => {
  const drain = new Drain();
  const { server } = await serve(drain, () => {});
  t.teardown(() => server.closeAllConnections());
  t.teardown(() => server.close());
  const client = stalledClient((server.address() as AddressInfo).port);
  t.teardown(() => client.destroy());
  await new Promise((r) => setTimeout(r, 200));
  let release!: () => void;
  drain.hold(new Promise<void>((resolve) => (release = resolve)));

  drain.interrupt(50);
  t.false(await drain.idle(300));
  t.is(drain.openRequests, 1, 'its handler may still answer with a status');
  t.is(drain.describe(), '1 response still open, 1 outcome publication or refund not settled');
  release();
  await new Promise((r) => setTimeout(r, 10));
  t.is(drain.describe(), '1 response still open');
});
