import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.ts';
import { billingFor, identityFor, openDocumentsOnly, openRecordsForAdmin } from '../../core/kernel/runtime.ts';
import { createMemoryCounters } from '../../core/adapters/counters/memory.ts';
import { reconcileAll } from '../../core/billing/reconciliation.ts';
import { createAdminService } from './service.ts';
import { validate } from '../../core/http/validate.ts';
import { ApiError } from '../../core/errors.ts';
import { bootstrapBody, grantBody, keyBody, cloneBody, userBody } from './schemas.ts';

const USAGE = `usage: npm run admin -- <command> [options]   (prints JSON)

  bootstrap     --name <n> [--email e] [--tokens N] [--daily-cap N] [--weekly-cap N] [--days N] [--gift] [--test]
                creates an account, a grant and a key: {accountId, grantId, keyId, apiKey}
  create-account --name <n> [--email e]
  create-grant  --account <id> --tokens N [--plan p] [--daily-cap N] [--weekly-cap N] [--days N] [--gift]
  start-trial   --account <id>
  create-key    --account <id> [--grant <id>] [--test] [--key-name n]
  list-keys     --account <id>
  revoke-key    --key <id>
  balance       --account <id>
  create-user   --account <id> --email <e> [--name n] [--password p | password on stdin] [--no-password]
                a person who signs in (OAuth consent, console); the password is hashed with scrypt
  list-users    --account <id>
  create-clone  --account <id> --name <n> --base-voice <voiceId> [--engine v4|v3] [--reference-gone]
  reconcile     --grant <id>
  reconcile-all [--settle-seconds N] [--skip-usage] [--usage-window-hours N] [--usage-delay-minutes N]
                every grant's usage against its ledger, and each account's ledger charges against
                usage analytics over a recent window; exits 2 when something drifted`;

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

/** A password piped in (`printf '%s' "$PW" | npm run admin -- create-user ...`) stays out of the shell history. */
async function readStdin(): Promise<string | null> {
  if (process.stdin.isTTY) return null;
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '') || null;
}

async function run(argv: string[]): Promise<unknown> {
  const { positionals, values: o } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, email: { type: 'string' }, tokens: { type: 'string' }, plan: { type: 'string' },
      'daily-cap': { type: 'string' }, 'weekly-cap': { type: 'string' }, days: { type: 'string' }, gift: { type: 'boolean' },
      test: { type: 'boolean' }, account: { type: 'string' }, grant: { type: 'string' }, key: { type: 'string' },
      'key-name': { type: 'string' }, 'base-voice': { type: 'string' }, engine: { type: 'string' }, 'reference-gone': { type: 'boolean' },
      password: { type: 'string' }, 'no-password': { type: 'boolean' },
      'settle-seconds': { type: 'string' }, 'skip-usage': { type: 'boolean' }, 'usage-window-hours': { type: 'string' },
      'usage-delay-minutes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (!command || o.help) {
    process.stdout.write(USAGE + '\n');
    return undefined;
  }
  const config = loadConfig();
  if (command === 'reconcile-all') return reconcileAllCommand(config, o);
  const { documents, close } = await openDocumentsOnly(config);
  const billing = billingFor(config, documents);
  const admin = createAdminService({ documents, billing });
  // The CLI never signs anyone in, so the sign-in rate limits can live in this process.
  const identity = identityFor(config, documents, createMemoryCounters().rateLimiter);
  const need = (value: string | undefined, flag: string) => {
    if (!value) throw new ApiError(400, `--${flag} is required for ${command}`);
    return value;
  };
  const grantInput = () => ({
    totalTokens: num(o.tokens), plan: o.plan, dailyCap: num(o['daily-cap']) ?? null, weeklyCap: num(o['weekly-cap']) ?? null,
    expiresInDays: num(o.days) ?? null, isGift: o.gift ?? false,
  });
  try {
    switch (command) {
      case 'bootstrap': {
        const g = grantInput();
        const input = validate(bootstrapBody, { name: o.name, email: o.email, kind: o.test ? 'test' : 'live', grant: { ...g, totalTokens: g.totalTokens ?? 1_000_000 } });
        return await admin.bootstrap(input);
      }
      case 'create-account':
        return await admin.createAccount({ name: need(o.name, 'name'), email: o.email ?? null });
      case 'create-grant':
        return await admin.createGrant(need(o.account, 'account'), validate(grantBody, grantInput()));
      case 'start-trial':
        return await admin.startTrial(need(o.account, 'account'));
      case 'create-key':
        return await admin.createKey(need(o.account, 'account'), validate(keyBody, { kind: o.test ? 'test' : 'live', grantId: o.grant ?? null, name: o['key-name'] ?? null }));
      case 'list-keys':
        return { keys: await admin.listKeys(need(o.account, 'account')) };
      case 'revoke-key':
        return await admin.revokeKey(need(o.key, 'key'));
      case 'balance':
        return await admin.balance(need(o.account, 'account'));
      case 'create-user': {
        const password = o['no-password'] ? null : o.password ?? (await readStdin());
        if (password === null && !o['no-password']) throw new ApiError(400, 'create-user needs --password, a password on stdin, or --no-password');
        const body = validate(userBody, { email: o.email, password, name: o.name ?? null }) as { email: string; password: string | null; name: string | null };
        return await identity.createUser({ accountId: need(o.account, 'account'), ...body });
      }
      case 'list-users':
        return { users: await identity.listUsers(need(o.account, 'account')) };
      case 'create-clone':
        return await admin.createClone(need(o.account, 'account'), validate(cloneBody, {
          name: o.name, engine: o.engine ?? 'v4', baseVoiceId: o['base-voice'], referenceAvailable: !o['reference-gone'],
        }));
      case 'reconcile':
        return await admin.reconcile(need(o.grant, 'grant'));
      default:
        throw new ApiError(400, `unknown command "${command}"\n${USAGE}`);
    }
  } finally {
    await close();
  }
}

/** Exit status of `reconcile-all` when grants or accounts drifted (the report is printed as usual). */
const DRIFT_EXIT_CODE = 2;

function nonNegative(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new ApiError(400, `--${flag} must be a number of at least 0`);
  return n;
}

async function reconcileAllCommand(config: ReturnType<typeof loadConfig>, o: Record<string, string | boolean | undefined>) {
  const settleMs = nonNegative(o['settle-seconds'] as string | undefined, 'settle-seconds', 30) * 1000;
  const windowMs = nonNegative(o['usage-window-hours'] as string | undefined, 'usage-window-hours', 24) * 3_600_000;
  const delayMs = nonNegative(o['usage-delay-minutes'] as string | undefined, 'usage-delay-minutes', 15) * 60_000;
  const skipUsage = o['skip-usage'] === true;
  const { documents, analytics, close } = await openRecordsForAdmin(config, { analytics: !skipUsage });
  try {
    const report = await reconcileAll({ documents, analytics }, { settleMs, usageWindow: skipUsage ? null : { windowMs, delayMs } });
    if (report.grantsDrifted > 0 || (report.usage?.accountsDrifted ?? 0) > 0) process.exitCode = DRIFT_EXIT_CODE;
    return report;
  } finally {
    await close();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  },
  (err) => {
    const message = err instanceof ApiError ? err.messages : (err as Error).message;
    process.stderr.write(JSON.stringify({ error: message }) + '\n');
    process.exit(1);
  },
);
