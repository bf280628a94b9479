import type { BusMessage } from '../../ports/bus.ts';
import type { GroupState, Member } from './local-group.ts';
import type { MessageLog, StoredMessage } from './local-log.ts';
import { backoffMs, usesAnAttempt, type BusErrorReporter } from './retry.ts';

/** Consumer loops of the local bus: fetch from the committed offset, handle, commit only after success. */

export interface ConsumerContext {
  log: MessageLog;
  topic: string;
  group: string;
  member: Member;
  state: GroupState;
  pollMs: number;
  retryBackoffMs: number;
  onError: BusErrorReporter;
  deadLetter(message: StoredMessage): void;
}

/** Messages handled per claim of a partition before it is handed back, so one busy key cannot starve the others. */
const MESSAGES_PER_CLAIM = 100;
function toBusMessage<T>(stored: StoredMessage, attempt: number): BusMessage<T> {
  return { id: stored.id, key: stored.key, value: JSON.parse(stored.value) as T, publishedAt: stored.publishedAt, attempt };
}

/** Runs `step` until the member stops; an unexpected failure (the database went away) is reported, then retried. */
async function loop(ctx: ConsumerContext, step: () => Promise<void>): Promise<void> {
  while (!ctx.member.stopped) {
    try {
      await step();
    } catch (error) {
      ctx.onError(error, { topic: ctx.topic, group: ctx.group, ids: [], attempt: 0 });
      await ctx.member.pause(ctx.pollMs);
    }
  }
}

/** Delivers one message until it succeeds or is dead-lettered; false when stopped first (left uncommitted). */
async function deliver<T>(ctx: ConsumerContext, stored: StoredMessage, handler: (m: BusMessage<T>) => Promise<void>, maxAttempts: number): Promise<boolean> {
  for (let attempt = 1, failures = 0; ; attempt++) {
    try {
      await handler(toBusMessage<T>(stored, attempt));
      return true;
    } catch (error) {
      ctx.onError(error, { topic: ctx.topic, group: ctx.group, ids: [stored.id], attempt });
      if (usesAnAttempt(error) && ++failures >= maxAttempts) {
        ctx.deadLetter(stored);
        return true;
      }
      if (!(await ctx.member.pause(backoffMs(ctx.retryBackoffMs, attempt)))) return false;
    }
  }
}

export function runMessageWorker<T>(ctx: ConsumerContext, handler: (m: BusMessage<T>) => Promise<void>, maxAttempts: number): Promise<void> {
  const { log, topic, group, member, state } = ctx;

  async function drain(part: number): Promise<void> {
    let next = log.committed(group, topic, part);
    for (const stored of log.fetch(topic, part, next, MESSAGES_PER_CLAIM)) {
      if (member.stopped || !member.assigned.has(part)) return;
      if (!(await deliver(ctx, stored, handler, maxAttempts))) return;
      next = stored.seq + 1;
      await log.commitGrouped(group, topic, part, next);
    }
  }

  return loop(ctx, async () => {
    const seen = member.seen;
    const part = state.claim(member, log.backlog(group, topic));
    if (part === undefined) return member.sleep(seen, ctx.pollMs);
    try {
      await drain(part);
    } finally {
      state.release([part]);
    }
  });
}

export function runBatchWorker<T>(ctx: ConsumerContext, handler: (m: BusMessage<T>[]) => Promise<void>, maxBatch: number, maxWaitMs: number): Promise<void> {
  const { log, topic, group, member, state } = ctx;
  // After a full batch the group is catching up: what is left is the tail, written at once instead of waiting to fill.
  let catchingUp = false;

  return loop(ctx, async () => {
    const seen = member.seen;
    const claimed = state.claimAll(member, log.backlog(group, topic));
    if (claimed.length === 0) return member.sleep(seen, ctx.pollMs);
    const cursors = new Map<number, number>();
    const batch: StoredMessage[] = [];
    const fill = (parts: number[]) => {
      for (const part of parts) {
        if (batch.length >= maxBatch) return;
        const from = cursors.get(part) ?? log.committed(group, topic, part);
        const fetched = log.fetch(topic, part, from, maxBatch - batch.length);
        batch.push(...fetched);
        cursors.set(part, fetched.length > 0 ? fetched[fetched.length - 1]!.seq + 1 : from);
      }
    };
    try {
      let filledAt = member.seen;
      fill(claimed);
      const deadline = catchingUp ? 0 : Date.now() + maxWaitMs;
      while (batch.length < maxBatch && Date.now() < deadline && !member.stopped) {
        await member.sleep(filledAt, deadline - Date.now());
        filledAt = member.seen;
        claimed.push(...state.claimAll(member, log.backlog(group, topic)));
        fill(claimed);
      }
      if (batch.length === 0) return;
      catchingUp = batch.length >= maxBatch;
      for (let attempt = 1; ; attempt++) {
        try {
          await handler(batch.map((stored) => toBusMessage<T>(stored, attempt)));
          break;
        } catch (error) {
          ctx.onError(error, { topic, group, ids: batch.map((m) => m.id), attempt });
          // A batch is never dead-lettered: the handler (an aggregator writing a store) is retried until it can write.
          if (!(await member.pause(backoffMs(ctx.retryBackoffMs, attempt)))) return;
        }
      }
      const nextByPart = new Map<number, number>();
      for (const stored of batch) nextByPart.set(stored.part, stored.seq + 1);
      log.commitMany(group, topic, nextByPart);
    } finally {
      state.release(claimed);
    }
  });
}
