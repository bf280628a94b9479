import { ApiFailure, consoleApi } from '../api.ts';
import { announce, busy, codeBlock, field, focusResult, h, notice, replace } from '../dom.ts';
import { fmtDateTime, t, timeZoneName } from '../i18n.ts';
import { grantStatus, planName, type GrantEntry } from './grants.ts';

/**
 * API keys: create a live or test key against an active grant (the
 * plaintext shown once, with a copy button and a curl example), list them
 * with their last use, revoke; SPEC's 5-key and active-grant rules and the
 * one-time trial as plain messages.
 */

interface PublicKey {
  id: string;
  prefix: string;
  kind: 'live' | 'test';
  name: string | null;
  grantId: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

interface KeysView {
  keys: PublicKey[];
  maxActiveKeys: number;
  activeGrants: GrantEntry[];
  /** the plans the listed keys stand on, whatever their state */
  keyGrants: GrantEntry[];
  trialAvailable: boolean;
}

/** SPEC's key rules as sentences, not envelopes. */
export function keyRefusal(err: unknown, view?: KeysView): string {
  if (!(err instanceof ApiFailure)) return t('common.error', { message: (err as Error).message });
  switch (err.code) {
    case 'KEY_LIMIT_REACHED':
      return t('keys.limit', { count: view?.maxActiveKeys ?? 5 });
    case 'NO_ACTIVE_GRANT':
      return t('keys.noGrant');
    case 'TRIAL_ALREADY_USED':
      return t('keys.trialUsed');
    default:
      return t('common.error', { message: err.message });
  }
}

function curlExample(apiKey: string): string {
  return [
    `curl -s ${location.origin}/api/v1/audio/speech \\`,
    `  -H "Authorization: Bearer ${apiKey}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d '{"input":"Xin chào! Đây là giọng đọc tiếng Việt.","voice":"vi-north-female-mai"}' \\`,
    '  -o hello.mp3',
  ].join('\n');
}

export async function render(root: HTMLElement): Promise<void> {
  const messages = h('div', { class: 'messages' });
  const created = h('div', {});
  const body = h('div', {});
  root.append(h('h1', { tabindex: -1 }, t('keys.title')), h('p', { class: 'lead' }, t('keys.intro')), messages, created, body);

  /** `focus`: after an action that rebuilt its own button away, the message takes focus (and is read as it does). */
  const show = (kind: 'error' | 'success' | 'info', text: string, focus = false) => {
    const box = notice(kind, text);
    replace(messages, box);
    if (focus) focusResult(box);
    else if (kind !== 'error') announce(text);
  };

  async function refresh(): Promise<void> {
    const view = await consoleApi<KeysView>('/keys');
    replace(body, trialSection(view), createForm(view), keyTable(view));
  }

  function trialSection(view: KeysView): HTMLElement | null {
    if (view.activeGrants.length > 0) return null;
    const button = h('button', { type: 'button' }, t('keys.trial'));
    button.addEventListener('click', () => void busy(button, async () => {
      try {
        await consoleApi('/trial', { method: 'POST' });
        await refresh();
        show('success', t('keys.trialStarted'), true);
      } catch (err) {
        show('error', keyRefusal(err, view));
      }
    }));
    return h('section', { class: 'card', 'aria-labelledby': 'no-plan' },
      h('h2', { id: 'no-plan' }, t('keys.noPlanTitle')),
      h('p', {}, t('keys.noGrant')),
      view.trialAvailable ? [h('p', {}, t('keys.trialIntro')), button] : h('p', {}, t('keys.trialUsed')));
  }

  function createForm(view: KeysView): HTMLElement {
    const active = view.keys.filter((k) => !k.revokedAt).length;
    const atLimit = active >= view.maxActiveKeys;
    const noGrant = view.activeGrants.length === 0;
    const name = h('input', { type: 'text', maxlength: 80, autocomplete: 'off' });
    const kind = h('select', {},
      h('option', { value: 'live' }, t('keys.kindLive')),
      h('option', { value: 'test' }, t('keys.kindTest')));
    const grant = h('select', {}, view.activeGrants.slice().reverse().map((g) =>
      h('option', { value: g.grantId }, `${planName(g)} — ${t('balance.left', { remaining: g.remainingTokens, total: g.totalTokens })}`)));
    const submit = h('button', { type: 'submit', disabled: atLimit || noGrant }, t('keys.submit'));
    const form = h('form', { class: 'card', 'aria-labelledby': 'create-key' },
      h('h2', { id: 'create-key' }, t('keys.create')),
      h('p', { class: 'count' }, t('keys.count', { active, max: view.maxActiveKeys })),
      atLimit ? notice('info', t('keys.limit', { count: view.maxActiveKeys })) : null,
      h('div', { class: 'row' }, field(t('keys.name'), name), field(t('keys.kind'), kind), noGrant ? null : field(t('keys.grant'), grant)),
      submit);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(submit, async () => {
        try {
          const result = await consoleApi<{ apiKey: string; key: PublicKey }>('/keys', { method: 'POST', json: { kind: kind.value, grantId: grant.value || null, name: name.value.trim() || null } });
          replace(messages);
          showCreated(result.apiKey);
          await refresh();
        } catch (err) {
          show('error', keyRefusal(err, view));
        }
      });
    });
    return form;
  }

  function showCreated(apiKey: string): void {
    const labels = { copy: t('common.copy'), copied: t('common.copied') };
    const close = h('button', { type: 'button', class: 'secondary' }, t('keys.createdDone'));
    close.addEventListener('click', () => replace(created));
    const heading = h('h2', { id: 'new-key', tabindex: -1 }, t('keys.createdTitle'));
    replace(created, h('section', { class: 'card highlight', 'aria-labelledby': 'new-key' },
      heading,
      notice('info', t('keys.createdOnce')),
      codeBlock(t('keys.createdKey'), apiKey, labels),
      codeBlock(t('keys.createdCurl'), curlExample(apiKey), labels),
      close));
    heading.focus();
    announce(t('keys.createdTitle'));
  }

  function keyTable(view: KeysView): HTMLElement {
    if (view.keys.length === 0) return h('p', {}, t('keys.empty'));
    // A key keeps working for reads when its plan is spent; its row says which plan and in what state.
    const plan = (grantId: string) => {
      const g = view.keyGrants.find((x) => x.grantId === grantId);
      if (!g) return grantId;
      return g.status === 'active' && !g.expired ? planName(g) : `${planName(g)} (${grantStatus(g)})`;
    };
    return h('section', { 'aria-labelledby': 'key-list' },
      h('h2', { id: 'key-list' }, t('keys.list')),
      h('p', { class: 'hint' }, t('time.localNote', { zone: timeZoneName() })),
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, ['keys.colName', 'keys.colKey', 'keys.colKind', 'keys.colPlan', 'keys.colCreated', 'keys.colLastUsed', 'keys.colStatus', 'keys.colActions'].map((k) =>
          h('th', { scope: 'col' }, t(k as Parameters<typeof t>[0]))))),
        h('tbody', {}, view.keys.map((key) => keyRow(key, plan(key.grantId)))))));
  }

  function keyRow(key: PublicKey, plan: string): HTMLElement {
    const revoke = key.revokedAt ? null : h('button', { type: 'button', class: 'danger small', 'aria-label': t('keys.revokeLabel', { prefix: key.prefix }) }, t('keys.revoke'));
    revoke?.addEventListener('click', () => {
      if (!window.confirm(t('keys.revokeConfirm', { prefix: key.prefix }))) return;
      void busy(revoke, async () => {
        try {
          await consoleApi(`/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
          await refresh();
          show('success', t('keys.revoked', { prefix: key.prefix }), true);
        } catch (err) {
          show('error', keyRefusal(err));
        }
      });
    });
    return h('tr', { 'data-key-id': key.id, class: key.revokedAt ? 'muted' : null },
      h('td', {}, key.name ?? h('span', { class: 'muted' }, t('keys.unnamed'))),
      h('td', {}, h('code', {}, `${key.prefix}…`)),
      h('td', {}, key.kind === 'live' ? t('keys.live') : t('keys.test')),
      h('td', {}, plan),
      h('td', {}, fmtDateTime(key.createdAt)),
      h('td', { class: 'last-used' }, key.lastUsedAt ? fmtDateTime(key.lastUsedAt) : t('common.never')),
      h('td', {}, key.revokedAt ? t('keys.statusRevoked', { when: fmtDateTime(key.revokedAt) }) : t('keys.statusActive')),
      h('td', {}, revoke));
  }

  await refresh();
}
