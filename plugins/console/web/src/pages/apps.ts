import { ApiFailure, optionalJson } from '../api.ts';
import { busy, focusResult, h, notice, replace } from '../dom.ts';
import { fmtDateTime, t, timeZoneName } from '../i18n.ts';

/**
 * Connected apps (MCP clients the user authorized through the OAuth
 * server): the OAuth plugin's JSON routes with the same session cookie;
 * disconnecting signs the app out at once (SPEC Authentication 7).
 */

interface ConnectedApp {
  clientId: string;
  clientName: string;
  scopes: string[];
  connectedAt: string;
}

export async function render(root: HTMLElement): Promise<void> {
  const messages = h('div', {});
  const body = h('div', {});
  root.append(h('h1', { tabindex: -1 }, t('apps.title')), h('p', { class: 'lead' }, t('apps.intro')), h('p', { class: 'hint' }, t('time.localNote', { zone: timeZoneName() })), messages, body);

  async function refresh(): Promise<void> {
    const answer = await optionalJson<{ apps: ConnectedApp[]; csrf: string }>('/oauth/connections');
    if (!answer) return replace(body, notice('info', t('apps.unavailable')));
    if (answer.apps.length === 0) return replace(body, h('p', {}, t('apps.empty')));
    replace(body, h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('apps.colName')), h('th', { scope: 'col' }, t('apps.colScopes')), h('th', { scope: 'col' }, t('apps.colConnected')), h('th', { scope: 'col' }, t('apps.colActions')))),
      h('tbody', {}, answer.apps.map((app) => {
        const disconnect = h('button', { type: 'button', class: 'danger small', 'aria-label': t('apps.disconnectLabel', { name: app.clientName }) }, t('apps.disconnect'));
        disconnect.addEventListener('click', () => {
          if (!window.confirm(t('apps.confirm', { name: app.clientName }))) return;
          void busy(disconnect, async () => {
            try {
              await optionalJson(`/oauth/connections/${encodeURIComponent(app.clientId)}`, { method: 'DELETE', headers: { 'x-csrf-token': answer.csrf } });
              const done = notice('success', t('apps.disconnected', { name: app.clientName }));
              replace(messages, done);
              await refresh();
              // Its row, and the button, are gone: the message takes focus (and is read as it does).
              focusResult(done);
            } catch (err) {
              replace(messages, notice('error', err instanceof ApiFailure ? err.message : String(err)));
            }
          });
        });
        return h('tr', { 'data-client-id': app.clientId },
          h('th', { scope: 'row' }, app.clientName, app.clientName !== app.clientId ? h('div', { class: 'hint' }, app.clientId) : null),
          h('td', {}, app.scopes.join(' ')),
          h('td', {}, fmtDateTime(app.connectedAt)),
          h('td', {}, disconnect));
      })))));
  }
  await refresh();
}
