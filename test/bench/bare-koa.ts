import Koa from 'koa';
import type { AddressInfo } from 'node:net';

/** The baseline: a bare Koa app answering a constant JSON body. Prints its URL. */
const app = new Koa();
app.use((ctx) => {
  ctx.body = { remaining: 1000, spendableTokens: 1000, totalRemainingTokens: 1000, plan: null };
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
