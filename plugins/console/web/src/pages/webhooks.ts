import { ApiFailure, apiJson, consoleApi } from '../api.ts';
import { announce, busy, codeBlock, field, focusResult, h, notice, replace } from '../dom.ts';
import { fmtDateTime, fmtNumber, t, timeZoneName } from '../i18n.ts';

/**
 * Webhook endpoints through the public routes: list, register (the signing
 * secret shown once), send a test event, pause and resume, rotate the
 * secret, delete, and each endpoint's deliveries with their errors.
 */

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  apiKeyId: string | null;
  events: string[];
  status: 'ENABLED' | 'DISABLED';
  secretPrefix: string;
  createdAt: string;
}

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: 'PENDING' | 'DELIVERED' | 'DEAD';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}

const EVENTS = ['tts.job.completed', 'tts.job.failed'];
const ERRORS = ['http_4xx', 'http_5xx', 'redirect_refused', 'connect_timeout', 'response_timeout', 'connection_refused', 'dns_failure', 'tls_failure', 'blocked_private_address', 'endpoint_unavailable', 'audio_not_uploaded'];

/** The API's refusal, in the console's words where it has them (the API calls a paused endpoint "disabled"). */
function refusal(err: unknown): string {
  if (!(err instanceof ApiFailure)) return (err as Error).message;
  return err.code === 'WEBHOOK_DISABLED' ? t('webhooks.testPaused') : err.message;
}

export async function render(root: HTMLElement): Promise<void> {
  const messages = h('div', {});
  const secretBox = h('div', {});
  const list = h('div', {});
  const labels = { copy: t('common.copy'), copied: t('common.copied') };
  /** `focus`: after an action that took its own button away (a deleted endpoint), the message takes focus and is read as it does. */
  const say = (kind: 'error' | 'success', text: string, focus = false) => {
    const box = notice(kind, text);
    replace(messages, box);
    if (focus) focusResult(box);
    else if (kind === 'success') announce(text);
  };
  /** the endpoint whose new secret is shown: once it is deleted, the secret is of no use and goes too */
  let secretOf: string | null = null;
  const hideSecret = () => {
    secretOf = null;
    replace(secretBox);
  };

  function showSecret(endpointId: string, title: string, secret: string, extra?: string): void {
    const heading = h('h2', { tabindex: -1, id: 'secret-heading' }, title);
    const done = h('button', { type: 'button', class: 'secondary' }, t('webhooks.secretDone'));
    done.addEventListener('click', hideSecret);
    secretOf = endpointId;
    replace(secretBox, h('section', { class: 'card highlight', 'aria-labelledby': 'secret-heading' },
      heading, notice('info', t('webhooks.secretOnce')), codeBlock(t('webhooks.secret'), secret, labels), extra ? h('p', {}, extra) : null, done));
    heading.focus();
  }

  const keys = await consoleApi<{ keys: Array<{ id: string; prefix: string; name: string | null; revokedAt: string | null }> }>('/keys').catch(() => ({ keys: [] }));
  // A key as the keys page shows it (name and prefix), never by its internal id, unless it cannot be found.
  const keyLabel = (id: string) => {
    const key = keys.keys.find((k) => k.id === id);
    return key ? `${key.name ?? t('keys.unnamed')} (${key.prefix}…)` : id;
  };
  const url = h('input', { type: 'url', required: true, placeholder: 'https://example.com/hooks/vieneu', maxlength: 2048 });
  const description = h('input', { type: 'text', maxlength: 500 });
  const keyFilter = h('select', {}, h('option', { value: '' }, t('webhooks.allKeys')),
    keys.keys.filter((k) => !k.revokedAt).map((k) => h('option', { value: k.id }, keyLabel(k.id))));
  const events = EVENTS.map((e) => h('input', { type: 'checkbox', value: e, checked: true, id: `ev-${e}` }));
  const create = h('button', { type: 'submit' }, t('webhooks.create'));
  const form = h('form', { class: 'card', 'aria-labelledby': 'new-endpoint' },
    h('h2', { id: 'new-endpoint' }, t('webhooks.new')),
    field(t('webhooks.url'), url, t('webhooks.urlHint')),
    h('div', { class: 'row' }, field(t('webhooks.description'), description), field(t('webhooks.keyFilter'), keyFilter)),
    h('fieldset', { class: 'inline' }, h('legend', {}, t('webhooks.events')), events.map((box) => h('span', { class: 'check' }, box, h('label', { for: box.id }, box.value)))),
    create);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = events.filter((e) => e.checked).map((e) => e.value);
    if (chosen.length === 0) return say('error', t('webhooks.noEvents'));
    void busy(create, async () => {
      try {
        const made = await apiJson<Endpoint & { secret: string }>('/webhooks', { method: 'POST', json: { url: url.value.trim(), description: description.value.trim() || null, apiKeyId: keyFilter.value || null, events: chosen } });
        form.reset();
        events.forEach((e) => (e.checked = true));
        replace(messages);
        showSecret(made.id, t('webhooks.created', { url: made.url }), made.secret);
        await refresh();
      } catch (err) {
        say('error', refusal(err));
      }
    });
  });

  function deliveriesTable(rows: Delivery[]): HTMLElement {
    if (rows.length === 0) return h('p', { class: 'muted' }, t('webhooks.noDeliveries'));
    return h('div', { class: 'table-wrap' }, h('table', { class: 'deliveries' },
      h('thead', {}, h('tr', {}, ['webhooks.colEvent', 'webhooks.colStatus', 'webhooks.colAttempts', 'webhooks.colCode', 'webhooks.colError', 'webhooks.colLast', 'webhooks.colNext'].map((k) => h('th', { scope: 'col' }, t(k as Parameters<typeof t>[0]))))),
      h('tbody', {}, rows.map((d) => h('tr', { 'data-status': d.status, 'data-event-type': d.eventType },
        h('th', { scope: 'row' }, d.eventType, h('br'), h('code', { class: 'small' }, d.eventId)),
        h('td', {}, t(`webhooks.status${d.status}` as Parameters<typeof t>[0])),
        h('td', { class: 'num' }, fmtNumber(d.attempts)),
        h('td', { class: 'num' }, d.lastStatusCode ?? '—'),
        h('td', {}, d.lastError ? [h('code', {}, d.lastError), ' ', ERRORS.includes(d.lastError) ? t(`webhooks.err.${d.lastError}` as Parameters<typeof t>[0]) : ''] : '—'),
        h('td', {}, fmtDateTime(d.lastAttemptAt)),
        h('td', {}, d.status === 'PENDING' ? fmtDateTime(d.nextAttemptAt) : '—'))))));
  }

  function endpointCard(e: Endpoint): HTMLElement {
    const headingId = `ep-${e.id}`;
    const deliveries = h('div', { class: 'delivery-list', 'aria-live': 'polite' });
    const action = (label: string, className: string, run: () => Promise<void>, aria?: string, name?: string) => {
      const b = h('button', { type: 'button', class: `${className} small`, 'aria-label': aria ?? null, 'data-action': name ?? null }, label);
      b.addEventListener('click', () => void busy(b, async () => {
        try {
          await run();
        } catch (err) {
          say('error', refusal(err));
        }
      }));
      return b;
    };
    const loadDeliveries = async () => replace(deliveries, deliveriesTable(await apiJson<Delivery[]>(`/webhooks/${e.id}/deliveries?limit=20`)));
    const paused = e.status === 'DISABLED';
    return h('article', { class: `card endpoint${paused ? ' muted' : ''}`, 'aria-labelledby': headingId, 'data-endpoint-id': e.id },
      h('h3', { id: headingId }, h('code', {}, e.url), ' ', h('span', { class: 'badge' }, paused ? t('webhooks.paused') : t('webhooks.enabled'))),
      e.description ? h('p', {}, e.description) : null,
      h('p', { class: 'hint' }, t('webhooks.meta', { events: e.events.join(', '), secret: `${e.secretPrefix}…`, created: fmtDateTime(e.createdAt) }), e.apiKeyId ? ` ${t('webhooks.onlyKey', { key: keyLabel(e.apiKeyId) })}` : ''),
      h('div', { class: 'actions' },
        action(t('webhooks.test'), 'secondary', async () => {
          await apiJson(`/webhooks/${e.id}/test`, { method: 'POST' });
          say('success', t('webhooks.testSent'));
          await loadDeliveries();
          // The dispatcher sends it within a second or so: show the outcome.
          setTimeout(() => void loadDeliveries().catch(() => undefined), 2500);
        }, t('webhooks.testLabel', { url: e.url })),
        action(paused ? t('webhooks.resume') : t('webhooks.pause'), 'secondary', async () => {
          await apiJson(`/webhooks/${e.id}/${paused ? 'enable' : 'disable'}`, { method: 'POST' });
          await refresh();
          say('success', paused ? t('webhooks.resumed') : t('webhooks.pausedNow'));
          // The card is rebuilt: focus goes to its new Resume (or Pause) button, where the keyboard was.
          focusResult(list.querySelector<HTMLElement>(`[data-endpoint-id="${CSS.escape(e.id)}"] [data-action=toggle]`));
        }, `${paused ? t('webhooks.resume') : t('webhooks.pause')} ${e.url}`, 'toggle'),
        action(t('webhooks.rotate'), 'secondary', async () => {
          if (!window.confirm(t('webhooks.rotateConfirm'))) return;
          const r = await apiJson<{ secret: string; previousSecretExpiresAt: string }>(`/webhooks/${e.id}/rotate-secret`, { method: 'POST' });
          showSecret(e.id, t('webhooks.rotated'), r.secret, t('webhooks.previousUntil', { when: fmtDateTime(r.previousSecretExpiresAt) }));
          await refresh();
        }, `${t('webhooks.rotate')} ${e.url}`),
        action(t('webhooks.deliveries'), 'secondary', loadDeliveries, `${t('webhooks.deliveries')} ${e.url}`),
        action(t('webhooks.delete'), 'danger', async () => {
          if (!window.confirm(t('webhooks.deleteConfirm', { url: e.url }))) return;
          await apiJson(`/webhooks/${e.id}`, { method: 'DELETE' });
          await refresh();
          say('success', t('webhooks.deleted'), true);
        }, `${t('webhooks.delete')} ${e.url}`)),
      deliveries);
  }

  async function refresh(): Promise<void> {
    const endpoints = await apiJson<Endpoint[]>('/webhooks');
    if (secretOf && !endpoints.some((e) => e.id === secretOf)) hideSecret();
    replace(list, h('h2', {}, t('webhooks.list')),
      endpoints.length === 0 ? h('p', {}, t('webhooks.empty')) : endpoints.map(endpointCard));
  }

  root.append(h('h1', { tabindex: -1 }, t('webhooks.title')), h('p', { class: 'lead' }, t('webhooks.intro')),
    h('p', { class: 'hint' }, t('time.localNote', { zone: timeZoneName() })), messages, secretBox, form, list);
  await refresh();
}
