import { parseFrameStream } from './frames.ts';
import { priceOf } from './speech.ts';
import type { Topology } from './topology.ts';

/**
 * Mixed client traffic on a topology, and the record of what it got back:
 * synchronous speech, streams and queued jobs, spread over the API
 * processes. Every text is unique (no cache hit may change a price or a
 * status), so what the platform must hold afterwards follows from the
 * record alone: the tokens each account was charged, the requests its usage
 * counts, the jobs it must see completed and reported.
 */

export type Kind = 'speech' | 'stream' | 'job';
/** the logical route name each kind is recorded under in usage */
export const ROUTE_OF: Record<Kind, string> = { speech: 'audio_speech', stream: 'tts_stream', job: 'tts' };

export interface Account {
  label: string;
  accountId: string;
  grantId: string;
  apiKey: string;
}

export interface Sent {
  kind: Kind;
  account: string;
  /** API process index that answered */
  api: number;
  phase: string;
  status: number;
  /** tokens the request costs when it succeeds */
  price: number;
  ok: boolean;
  jobId: string | null;
  problem: string | null;
  /** Date.now() when it was sent and when its answer had been read */
  startedAt: number;
  endedAt: number;
}

export class Traffic {
  readonly sent: Sent[] = [];
  private n = 0;

  constructor(private readonly topology: Topology, private readonly runId: string) {}

  /** A text no other request of this run uses; `sentences` > 1 makes a long one. */
  text(sentences = 1): string {
    const i = ++this.n;
    const first = `Yêu cầu số ${i} của lần chạy ${this.runId}: hệ thống phân tán đọc câu này bằng tiếng Việt.`;
    const more = Array.from({ length: sentences - 1 }, (_, k) => `Đây là câu thứ ${k + 2} của yêu cầu số ${i}, được đọc chậm rãi và rõ ràng.`);
    return [first, ...more].join(' ');
  }

  /** Sends one request and records what came back; a failure is recorded, not thrown. */
  async send(kind: Kind, account: Account, api: number, phase: string, sentences = 1): Promise<Sent> {
    const text = this.text(sentences);
    const record: Sent = { kind, account: account.label, api: api % this.topology.apis.length, phase, status: 0, price: priceOf(text), ok: false, jobId: null, problem: null, startedAt: Date.now(), endedAt: 0 };
    try {
      if (kind === 'speech') {
        const res = await this.topology.api(api, '/audio/speech', {
          method: 'POST', key: account.apiKey,
          json: { model: 'tts-1', input: text, voice: 'vi-north-female-mai', response_format: 'wav' },
        });
        record.status = res.status;
        const body = Buffer.from(await res.arrayBuffer());
        record.ok = res.status === 200 && body.subarray(0, 4).toString('ascii') === 'RIFF' && body.length > 44;
        if (!record.ok) record.problem = body.subarray(0, 300).toString('utf8');
      } else if (kind === 'stream') {
        const res = await this.topology.api(api, '/tts/stream', { method: 'POST', key: account.apiKey, json: { text } });
        record.status = res.status;
        const body = Buffer.from(await res.arrayBuffer());
        const parsed = res.status === 200 ? parseFrameStream(body) : null;
        record.ok = !!parsed && parsed.terminated && parsed.frames.length > 0;
        if (!record.ok) record.problem = parsed ? 'stream not terminated' : body.subarray(0, 300).toString('utf8');
      } else {
        const res = await this.topology.api(api, '/tts', { method: 'POST', key: account.apiKey, json: { text } });
        record.status = res.status;
        const body = (await res.json()) as { jobId?: string; status?: string };
        record.ok = res.status === 201 && body.status === 'queued' && typeof body.jobId === 'string';
        record.jobId = body.jobId ?? null;
        if (!record.ok) record.problem = JSON.stringify(body).slice(0, 300);
      }
    } catch (error) {
      record.problem = (error as Error).message;
    }
    record.endedAt = Date.now();
    this.sent.push(record);
    return record;
  }

  /** Runs `plan` with `lanes` requests in flight, each lane taking the next entry. */
  async run(plan: Array<{ kind: Kind; account: Account; api: number; sentences?: number }>, phase: string, lanes = 3): Promise<Sent[]> {
    const results: Sent[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: lanes }, async () => {
      while (next < plan.length) {
        const item = plan[next++]!;
        results.push(await this.send(item.kind, item.account, item.api, phase, item.sentences));
      }
    }));
    return results;
  }

  of(account: string): Sent[] {
    return this.sent.filter((s) => s.account === account);
  }

  jobs(account?: string): Sent[] {
    return this.sent.filter((s) => s.kind === 'job' && s.ok && (account === undefined || s.account === account));
  }

  /** Tokens the account must have been charged: every request that succeeded, once. */
  charged(account: string): number {
    return this.of(account).filter((s) => s.ok).reduce((sum, s) => sum + s.price, 0);
  }

  /** Requests of the account by usage route name. */
  byRoute(account: string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const s of this.of(account)) counts[ROUTE_OF[s.kind]] = (counts[ROUTE_OF[s.kind]] ?? 0) + 1;
    return counts;
  }

  failures(): Sent[] {
    return this.sent.filter((s) => !s.ok);
  }
}

/** A plan that cycles through the kinds, the accounts and the API processes. */
export function mixedPlan(count: number, accounts: Account[], kinds: Kind[] = ['job', 'speech', 'stream', 'job']): Array<{ kind: Kind; account: Account; api: number }> {
  return Array.from({ length: count }, (_, i) => ({ kind: kinds[i % kinds.length]!, account: accounts[i % accounts.length]!, api: i + Math.floor(i / accounts.length) }));
}
