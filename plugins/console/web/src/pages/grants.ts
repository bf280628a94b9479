import { h } from '../dom.ts';
import { fmtDateTime, fmtNumber, t } from '../i18n.ts';

/** A grant as the console's session routes list it: `GET /balance`'s plan view plus status and engines. */

export interface CapView {
  limit: number;
  used: number;
  remaining: number;
  resetAt: string;
}

export interface PlanView {
  grantId: string;
  name: string;
  totalTokens: number;
  usedTokens: number;
  remainingTokens: number;
  daily: CapView | null;
  weekly: CapView | null;
  expiresAt: string | null;
  isGift: boolean;
}

export interface GrantEntry extends PlanView {
  status: 'active' | 'replaced' | 'revoked';
  expired: boolean;
  engines: string[];
  createdAt: string;
}

export function planName(g: Pick<PlanView, 'name' | 'isGift'>): string {
  const known: Record<string, Parameters<typeof t>[0]> = { trial: 'plan.trial', gift: 'plan.gift', standard: 'plan.standard' };
  return known[g.name] ? t(known[g.name]) : g.name;
}

export function grantStatus(g: GrantEntry): string {
  if (g.status !== 'active') return t(g.status === 'replaced' ? 'balance.statusReplaced' : 'balance.statusRevoked');
  if (g.expired) return t('balance.statusExpired');
  return t('balance.statusActive');
}

/** A cap as a sentence: used, left, and when it resets, in the user's local time. */
export function capLine(cap: CapView | null): string {
  if (!cap) return t('balance.noCap');
  return t('balance.capLine', { used: fmtNumber(cap.used), limit: fmtNumber(cap.limit), remaining: fmtNumber(cap.remaining), when: fmtDateTime(cap.resetAt) });
}

/** A labelled meter of what is left. */
export function meter(label: string, left: number, total: number): HTMLElement {
  const value = total > 0 ? Math.max(0, Math.min(total, left)) : 0;
  return h('div', { class: 'meter-row' },
    h('meter', { min: 0, max: Math.max(1, total), value, 'aria-label': label }),
    h('span', {}, t('balance.left', { remaining: left, total })));
}
