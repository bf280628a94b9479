import { viewPage } from './bridge.ts';

/** `ui://vieneu/capabilities.html`: what the server offers, from list_capabilities. */
export const capabilitiesHtml = viewPage('VieNeu capabilities', `
<h1>VieNeu — Vietnamese text to speech</h1>
<p id="status" class="muted">Loading…</p>
<h2>Tools</h2><ul id="tools"></ul>
<h2>Engines</h2><ul id="engines"></ul>
<h2>Not offered here</h2><ul id="not-offered"></ul>
`, `
const $ = (id) => document.getElementById(id);
function fill(id, items) {
  $(id).replaceChildren(...items.map((text) => { const li = document.createElement('li'); li.textContent = text; return li; }));
}
vn.on('ui/notifications/tool-result', (result) => {
  const data = (result && result.structuredContent) || {};
  if (result && result.isError) { $('status').textContent = (data.error && data.error.message) || 'Error'; $('status').className = 'error'; return; }
  $('status').textContent = (data.tools || []).length + ' tools' + (data.audiobooks ? ', audiobooks included' : '');
  fill('tools', (data.tools || []).map((t) => t.name + ' — ' + t.title + (t.paid ? ' (costs tokens)' : ' (free)')));
  fill('engines', (data.engines || []).map((e) => e.key + ' — ' + e.label + ': ' + e.billingMultiplier + ' × ' + data.globalMultiplier + ' tokens per character'));
  fill('not-offered', data.notOffered || []);
});
vn.start('vieneu-capabilities');
`);
