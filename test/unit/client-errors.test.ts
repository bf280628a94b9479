import test from 'ava';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { answerClientErrors } from '../../core/http/client-errors.ts';

/** What a raw client gets back after sending `chunks` and then nothing. */
async function answerTo(chunks: string[]): Promise<string> {
  const server = http.createServer({ connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 400 }, (req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => { answer += d.toString(); });
    for (const chunk of chunks) socket.write(chunk);
    await new Promise((resolve) => socket.once('close', resolve));
    return answer;
  } finally {
    server.close();
  }
}

test('headers that stop arriving are 408 REQUEST_TIMEOUT in the native envelope, not "not valid HTTP"', async (t) => {
  const answer = await answerTo(['POST /api/v1/tts HTTP/1.1\r\nHost: x\r\n']);
  t.regex(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  t.regex(answer, /"error":"Request Timeout","code":"REQUEST_TIMEOUT"/);
});

test('a body that stops arriving is 408 too', async (t) => {
  const answer = await answerTo(['POST /api/v1/tts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":']);
  t.regex(answer, /^HTTP\/1\.1 408 /);
});

test('malformed HTTP is still 400 BAD_REQUEST', async (t) => {
  const answer = await answerTo(['GARBAGE\r\n\r\n']);
  t.regex(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.regex(answer, /"code":"BAD_REQUEST"/);
});
