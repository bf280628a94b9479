import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * Real HTTPS receivers for the webhook tests and benchmark, with their own
 * certificate authority made by the `openssl` CLI at test time. `trusted`
 * is signed by the CA the dispatcher is told to trust (config.webhooks.caFile);
 * `untrusted` by a second CA nobody trusts.
 */
export interface ServerIdentity {
  key: string;
  cert: string;
}

export interface TestPki {
  dir: string;
  caFile: string;
  trusted: ServerIdentity;
  untrusted: ServerIdentity;
  cleanup(): void;
}

const SERVER_NAMES = 'DNS:receiver.test,IP:127.0.0.1,IP:::1';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name} test CA`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

function makeServer(dir: string, ca: string, name: string): ServerIdentity {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=receiver.test']);
  writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=${SERVER_NAMES}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
  return { key: readFileSync(path.join(dir, `${name}.key`), 'utf8'), cert: readFileSync(path.join(dir, `${name}.crt`), 'utf8') };
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-pki-'));
  makeCa(dir, 'trusted-ca');
  makeCa(dir, 'rogue-ca');
  return {
    dir,
    caFile: path.join(dir, 'trusted-ca.crt'),
    trusted: makeServer(dir, 'trusted-ca', 'server'),
    untrusted: makeServer(dir, 'rogue-ca', 'rogue-server'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** SNI the client sent */
  servername: string | null;
}

/** Answers one request; the default is 204. */
export type Responder = (request: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  port: number;
  url(pathname?: string, host?: string): string;
  received: ReceivedRequest[];
  respond: Responder;
  /** requests being answered right now, and the most seen at once */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startReceiver(identity: ServerIdentity, respond: Responder = (_r, res) => void res.writeHead(204).end()): Promise<Receiver> {
  const receiver: Receiver = {
    port: 0,
    url: (pathname = '/hooks/tts', host = '127.0.0.1') => `https://${host}:${receiver.port}${pathname}`,
    received: [],
    respond,
    inFlight: 0,
    maxInFlight: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = https.createServer({ ...identity, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks),
        servername: ((req.socket as TLSSocket).servername as string | false | undefined) || null,
      };
      receiver.received.push(request);
      receiver.inFlight++;
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
      res.once('close', () => void receiver.inFlight--);
      receiver.respond(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

/** A TCP listener that accepts and never speaks: a TLS handshake against it never completes. */
export async function startBlackhole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
