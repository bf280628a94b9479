/**
 * SPEC Billing rule 3 across a crash: tokens are refunded when no audio is
 * produced and a stream cut short is refunded. A process SIGKILLed while it
 * streams `POST /tts/stream` and renders `POST /audio/speech` cut both
 * connections: the clients got no complete audio, and the refunds those
 * requests would have made died with the process. After a restart the
 * charges they held are refunded (core/billing/hold-recovery.ts), a request
 * answered in full before the kill stays charged, requests of the new
 * process are left alone, every grant reconciles with the ledger, and usage
 * counts each cut request once, as an error.
 */
import test from 'ava';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.ts';
import { crashScene } from '../helpers/crash-scene.ts';
import { recordStacks } from '../helpers/stacks.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';
import { TOPICS } from '../../core/ports/bus.ts';

const LEASE_SECONDS = 1;
const price = (characters: number) => Math.ceil(Math.max(50, characters) * 3 * 1.3 - 1e-9);
const LONG = 'Bài đọc thử dài để tiến trình còn đang tổng hợp khi bị dừng đột ngột. '.repeat(40);

for (const stack of recordStacks('request crash')) {
  test(`${stack.name}: SIGKILL mid-stream and mid-render; after restart the cut requests are refunded, the finished one and the new process's are kept, and the grant reconciles`, async (t) => {
    t.timeout(180_000);
    const scene = crashScene(t, stack, 'vieneu-request-crash-');
    const env = { ...scene.use.env, DATA_DIR: scene.dataDir, ADMIN_TOKEN, URL_SIGNING_SECRET: 'request-crash-signing-secret', CHARGE_HOLD_LEASE_SECONDS: String(LEASE_SECONDS) };
    const child = await scene.start(env);
    const base = `${child.url}/api/v1`;
    const boot = await (await fetch(`${child.url}/admin/v1/bootstrap`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Request crash', grant: { totalTokens: 10_000_000 } }),
    })).json();
    const headers = { authorization: `Bearer ${boot.apiKey}`, 'content-type': 'application/json' };
    const used = async (url: string) => (await (await fetch(`${url}/balance`, { headers })).json()).plan.usedTokens as number;

    // Answered in full before the kill: charged, and stays charged.
    const done = await fetch(`${base}/audio/speech`, { method: 'POST', headers, body: JSON.stringify({ input: 'Xin chào, đây là câu trả lời trọn vẹn.', response_format: 'wav' }) });
    t.is(done.status, 200);
    t.true((await done.arrayBuffer()).byteLength > 44);
    const kept = price([...'Xin chào, đây là câu trả lời trọn vẹn.'].length);
    t.is(await used(base), kept);

    // Two long requests in flight: a stream that has sent its first frame, and a whole WAV still rendering.
    const stream = await fetch(`${base}/tts/stream`, { method: 'POST', headers, body: JSON.stringify({ text: LONG }) });
    t.is(stream.status, 200);
    const reader = stream.body!.getReader();
    t.false((await reader.read()).done, 'the stream has begun');
    const speech = fetch(`${base}/audio/speech`, { method: 'POST', headers, body: JSON.stringify({ input: LONG, response_format: 'wav' }) })
      .then(async (res) => { await res.arrayBuffer(); return 'answered'; }, () => 'cut');
    const cutCost = 2 * price([...LONG.normalize('NFC')].length);
    await waitFor(async () => (await used(base)) === kept + cutCost, { what: 'both long requests to be charged' });

    await child.kill('SIGKILL');
    t.is(await speech, 'cut', 'the kill cut the WAV off before its answer');
    await t.throwsAsync(async () => { for (;;) if ((await reader.read()).done) return; }, undefined, 'the stream ends without its marker: cut');

    const restarted = await scene.restart(env);
    const after = `${restarted.url}/api/v1`;
    // A request of the new process, held while it is answered, then released: never refunded by the recovery.
    const fresh = await fetch(`${after}/audio/speech`, { method: 'POST', headers, body: JSON.stringify({ input: 'Câu của tiến trình mới.', response_format: 'wav' }) });
    t.is(fresh.status, 200);
    await fresh.arrayBuffer();
    const keptAfter = kept + price([...'Câu của tiến trình mới.'].length);
    await waitFor(async () => (await used(after)) === keptAfter, { timeoutMs: 30_000, what: 'the cut requests to be refunded' });
    // Several leases later nothing more moved.
    await new Promise((resolve) => setTimeout(resolve, 4 * LEASE_SECONDS * 1000));
    t.is(await used(after), keptAfter);

    const documents = await restarted.platform.service(coreServices.documents);
    t.deepEqual(await documents.holds.orphaned(Date.now() + 3_600_000, 10), [], 'no hold left behind');
    await waitFor(async () => (await (await restarted.admin(`/grants/${boot.grantId}/reconcile`)).json()).balanced === true, { what: 'the grant to reconcile with the ledger' });
    const entries = await documents.ledger.listByGrant(boot.grantId);
    t.is(entries.filter((e) => e.kind === 'refund').length, 2, 'one refund per cut request');
    // Usage shows the two cut requests once each, as errors refunded in full.
    const usage = await waitFor(async () => {
      const report = await (await fetch(`${after}/usage`, { headers })).json();
      return report.totals.requests >= 4 ? report : undefined;
    }, { what: 'usage to count the cut requests' });
    t.like(usage.totals, { requests: 4, ok: 2, error: 2, tokenCost: keptAfter + cutCost });
    t.deepEqual(usage.byRoute.map((r: { route: string; requests: number; error: number }) => [r.route, r.requests, r.error]).sort(), [['audio_speech', 3, 1], ['tts_stream', 1, 1]]);
  });
}

test('a request\'s hold is released only after its outcome is on the bus: a crash in between leaves the hold, whose recovery reports the request', async (t) => {
  const p = await startTestPlatform();
  t.teardown(() => p.stop());
  const { apiKey } = await p.bootstrap();
  const bus = await p.platform.service(coreServices.bus);
  const documents = await p.platform.service(coreServices.documents);
  const publish = bus.publish.bind(bus);
  let letThrough!: () => void;
  const gate = new Promise<void>((resolve) => (letThrough = resolve));
  bus.publish = async (topic, messages) => {
    if (topic === TOPICS.outcomes) await gate;
    return publish(topic, messages);
  };
  t.teardown(() => letThrough());
  const res = await p.api('/audio/speech', { method: 'POST', key: apiKey, json: { input: 'Xin chào.', response_format: 'wav' } });
  t.is(res.status, 200);
  await res.arrayBuffer();
  // Every hold is an orphan a day from now (no beat lasts that long): the request's is still there.
  const held = async () => (await documents.holds.orphaned(Date.now() + 86_400_000, 10)).filter((e) => e.route === 'audio_speech');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await held()).length, 1, 'held while its outcome waits for the bus');
  letThrough();
  await waitFor(async () => (await held()).length === 0, { what: 'the hold to be released once the outcome is published' });
});
