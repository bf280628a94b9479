import type { Documents, Grant } from '../../core/ports/documents.ts';
import { dailyCap, isExpired, payerCandidates, tokensLeft, weeklyCap } from '../../core/billing/assessment.ts';
import { DomainError } from '../../core/errors.ts';
import { LIMITS } from './rules.ts';

/**
 * What the account's grants can pay for a book, grant by grant in the order
 * billing tries them (the key's own grant, then the others oldest first).
 * A book renders over days, so a grant's daily and weekly caps bound one
 * chapter (it must fit in one cap window), not the book: a book larger than
 * today's cap waits on `quota` and goes on when the window rolls over.
 */
export interface GrantBudget {
  grantId: string;
  /** tokens left on the grant */
  left: number;
  /** the most one chapter may cost on it: its tighter cap, or Infinity */
  ceiling: number;
}

export interface PricedChapter {
  index: number;
  title: string;
  tokens: number;
}

export type Weighing =
  | { ok: true; total: number }
  | { ok: false; total: number; chapter: PricedChapter | null; required: number; remaining: number };

const capCeiling = (g: Grant) => Math.min(dailyCap(g) ?? Infinity, weeklyCap(g) ?? Infinity);

export function budgetsOf(own: Grant | null, all: Grant[], engine: string, now: Date): GrantBudget[] {
  return payerCandidates(own, all, engine, now)
    .filter((g) => g.status === 'active' && !isExpired(g, now) && g.engines.includes(engine))
    .map((g) => ({ grantId: g.id, left: tokensLeft(g), ceiling: capCeiling(g) }));
}

/** Loads the grants that may pay for `payer` and their budgets. */
export async function grantBudgets(documents: Documents, payer: { accountId: string; grantId: string | null }, engine: string, now = new Date()): Promise<GrantBudget[]> {
  const all = await documents.grants.listActive(payer.accountId);
  const own = payer.grantId ? all.find((g) => g.id === payer.grantId) ?? (await documents.grants.get(payer.grantId)) : null;
  return budgetsOf(own, all, engine, now);
}

/**
 * Weighs the chapters in order, each paid whole by the first grant that can
 * (as billing will when its turn comes). Refused when the total is more than
 * every grant has, or when a chapter finds no grant able to pay it.
 */
export function weighChapters(chapters: PricedChapter[], budgets: GrantBudget[]): Weighing {
  const total = chapters.reduce((sum, c) => sum + c.tokens, 0);
  const left = budgets.map((b) => b.left);
  const available = left.reduce((sum, l) => sum + l, 0);
  if (total > available) return { ok: false, total, chapter: null, required: total, remaining: available };
  for (const chapter of chapters) {
    const payer = budgets.findIndex((b, i) => Math.min(left[i]!, b.ceiling) >= chapter.tokens);
    if (payer < 0) {
      const remaining = Math.max(0, ...budgets.map((b, i) => Math.min(left[i]!, b.ceiling)));
      return { ok: false, total, chapter, required: chapter.tokens, remaining };
    }
    left[payer]! -= chapter.tokens;
  }
  return { ok: true, total };
}

export function insufficientTokens(w: Extract<Weighing, { ok: false }>): DomainError {
  if (!w.chapter) {
    return new DomainError('payment_required', `The book needs ${w.total} tokens and your plans have ${w.remaining} left in all. Top up, or remove chapters, then start again.`, {
      code: 'insufficient_tokens', required: w.required, remaining: w.remaining,
    });
  }
  const { index, title } = w.chapter;
  return new DomainError('payment_required', `Chapter ${index} ("${title}") needs ${w.required} tokens and no plan can pay it when its turn comes: the most one plan would have left is ${w.remaining}.`, {
    code: 'insufficient_tokens', required: w.required, remaining: w.remaining, extra: { chapter: index, chapterTitle: title },
  });
}

/** The most characters whose price stays within `ceiling` tokens. */
export function charsWithin(ceiling: number, priceOf: (characters: number) => number): number {
  if (!Number.isFinite(ceiling)) return Infinity;
  let chars = Math.max(0, Math.floor(ceiling / Math.max(1e-9, priceOf(1000) / 1000)));
  while (chars > 0 && priceOf(chars) > ceiling) chars--;
  while (priceOf(chars + 1) <= ceiling) chars++;
  return chars;
}

/**
 * SPEC `chapterCharsMax`: the longest chapter a plan of the account can
 * render, 60000 when no plan has a tighter cap. Any grant that may pay
 * counts, since billing falls through to it.
 */
export function chapterCharsMax(budgets: GrantBudget[], priceOf: (characters: number) => number): number {
  if (budgets.length === 0) return LIMITS.chapterChars;
  const best = Math.max(...budgets.map((b) => charsWithin(b.ceiling, priceOf)));
  return Math.min(LIMITS.chapterChars, best);
}
