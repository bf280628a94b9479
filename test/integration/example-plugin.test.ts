import test from 'ava';
import { startTestPlatform } from '../helpers/platform.ts';
import { readFileSync } from 'node:fs';

test('the README example plugin is the file in plugins/echo, under 40 lines', (t) => {
  const readme = readFileSync('README.md', 'utf8');
  const source = readFileSync('plugins/echo/index.ts', 'utf8');
  t.true(readme.includes(source.trim()));
  t.true(source.trim().split('\n').length < 40);
});

test('enabling a plugin is one line of configuration: its route gets auth, rate limits and the envelope from core', async (t) => {
  const p = await startTestPlatform({ PLUGINS: 'catalog,account,echo' });
  try {
    t.is((await p.api('/echo/price', { method: 'POST', json: { text: 'xin chào' } })).status, 401);
    const { apiKey } = await p.bootstrap();
    const ok = await p.api('/echo/price', { method: 'POST', key: apiKey, json: { text: 'xin chào' } });
    t.is(ok.status, 200);
    t.deepEqual(await ok.json(), { engine: 'v4', characters: 8, tokens: 195 });
    t.truthy(ok.headers.get('x-ratelimit-limit'));
    const bad = await p.api('/echo/price', { method: 'POST', key: apiKey, json: { text: 5 } });
    t.is(bad.status, 400);
    const body = await bad.json();
    t.deepEqual(body.message, ['text must be a string']);
    t.is(body.traceId, bad.headers.get('x-request-id'));
  } finally {
    await p.stop();
  }
});

test('a plugin that is not enabled serves nothing', async (t) => {
  const p = await startTestPlatform({ PLUGINS: 'catalog' });
  try {
    t.is((await p.api('/echo/price', { method: 'POST', json: { text: 'x' } })).status, 404);
  } finally {
    await p.stop();
  }
});

test('a configured plugin that does not exist stops start-up with a clear message', async (t) => {
  await t.throwsAsync(startTestPlatform({ PLUGINS: 'catalog,nope' }), { message: /PLUGINS names "nope"/ });
});
