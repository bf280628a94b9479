import { apiJson, consoleApi } from '../api.ts';
import { h } from '../dom.ts';
import { fmtDateTime, fmtNumber, t, timeZoneName } from '../i18n.ts';
import { href } from '../router.ts';
import { capLine, grantStatus, meter, planName, type GrantEntry, type PlanView } from './grants.ts';

/** Balance (`GET /balance`, as a key sees it) and every grant of the account with its caps and reset times. */

interface Balance {
  remaining: number;
  spendableTokens: number;
  totalRemainingTokens: number;
  plan: PlanView | null;
}

function tile(label: string, value: string, hint?: string): HTMLElement {
  return h('div', { class: 'tile' }, h('div', { class: 'tile-label' }, label), h('div', { class: 'tile-value' }, value), hint ? h('div', { class: 'hint' }, hint) : null);
}

function grantCard(g: GrantEntry, payer: string | null): HTMLElement {
  const headingId = `grant-${g.grantId}`;
  return h('article', { class: `card grant${g.status !== 'active' || g.expired ? ' muted' : ''}`, 'aria-labelledby': headingId, 'data-grant-id': g.grantId },
    h('h3', { id: headingId }, planName(g), ' ', h('span', { class: 'badge' }, grantStatus(g)), g.grantId === payer ? h('span', { class: 'badge accent' }, t('balance.payer')) : null),
    meter(t('balance.tokensLeftLabel', { plan: planName(g) }), g.remainingTokens, g.totalTokens),
    h('dl', {},
      h('dt', {}, t('balance.daily')), h('dd', { class: 'daily' }, capLine(g.daily)),
      h('dt', {}, t('balance.weekly')), h('dd', { class: 'weekly' }, capLine(g.weekly)),
      h('dt', {}, t('balance.expires')), h('dd', {}, g.isGift || !g.expiresAt ? t('balance.neverExpires') : fmtDateTime(g.expiresAt)),
      h('dt', {}, t('balance.engines')), h('dd', {}, g.engines.join(', ')),
      h('dt', {}, t('balance.started')), h('dd', {}, fmtDateTime(g.createdAt))));
}

export async function render(root: HTMLElement): Promise<void> {
  const [balance, { grants }] = await Promise.all([apiJson<Balance>('/balance'), consoleApi<{ grants: GrantEntry[] }>('/grants')]);
  root.append(
    h('h1', { tabindex: -1 }, t('balance.title')),
    h('p', { class: 'hint' }, t('time.localNote', { zone: timeZoneName() })),
    h('section', { class: 'tiles', 'aria-label': t('balance.summary') },
      tile(t('balance.remaining'), fmtNumber(balance.remaining), t('balance.remainingHint')),
      tile(t('balance.spendable'), fmtNumber(balance.spendableTokens), t('balance.spendableHint')),
      tile(t('balance.total'), fmtNumber(balance.totalRemainingTokens), t('balance.totalHint'))),
    h('h2', {}, t('balance.plans')),
    grants.length === 0
      ? h('p', {}, t('balance.none'), ' ', h('a', { href: href('keys') }, t('balance.toKeys')))
      : h('div', { class: 'grants' }, grants.slice().reverse().map((g) => grantCard(g, balance.plan?.grantId ?? null))),
  );
}
