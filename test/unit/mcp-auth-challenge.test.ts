import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { DomainError } from '../../core/errors.ts';
import type { Documents } from '../../core/ports/documents.ts';
import type { Logger } from '../../core/logger.ts';
import type { McpServerDefinition } from '../../plugins/mcp/server.ts';
import { mcpHttp } from '../../plugins/mcp/http.ts';

/** RFC 6750 3.1 and MCP's scope challenge: a token refused for its scope says which scope, where clients look for it. */
async function mcpRefusing(error: Error) {
  const app = new Koa();
  app.use(mcpHttp({
    def: {} as McpServerDefinition,
    keys: { authenticate: async () => { throw error; }, forget: () => {} },
    documents: {} as Documents,
    selfApi: { publicBaseUrl: () => 'https://api.example.test', fetch: async () => new Response() },
    logger: { warn: () => {}, error: () => {}, info: () => {}, debug: () => {} } as unknown as Logger,
    allowedOrigins: [], waitSeconds: 1, pollMs: 10,
  }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {
      method: 'POST', headers: { authorization: 'Bearer some-token', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
  } finally {
    server.close();
  }
}

test('a token without the tts scope is 403 with WWW-Authenticate: Bearer error="insufficient_scope", scope="tts" and the resource metadata', async (t) => {
  const res = await mcpRefusing(new DomainError('forbidden', 'The access token lacks the "tts" scope.', { code: 'INSUFFICIENT_SCOPE' }));
  t.is(res.status, 403);
  const challenge = res.headers.get('www-authenticate') ?? '';
  t.regex(challenge, /^Bearer error="insufficient_scope", scope="tts", /);
  t.regex(challenge, /resource_metadata="https:\/\/api\.example\.test\/\.well-known\/oauth-protected-resource"/);
});

test('an unknown token is 401 invalid_token; another 403 carries no challenge', async (t) => {
  const unknown = await mcpRefusing(new DomainError('unauthenticated', 'The access token is unknown, expired or revoked.'));
  t.is(unknown.status, 401);
  t.regex(unknown.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  const forbidden = await mcpRefusing(new DomainError('forbidden', 'No.', { code: 'SOMETHING_ELSE' }));
  t.is(forbidden.status, 403);
  t.is(forbidden.headers.get('www-authenticate'), null);
});
