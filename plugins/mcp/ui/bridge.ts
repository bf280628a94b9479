/**
 * The view side of the MCP Apps protocol (SEP-1865, 2026-01-26), as a small
 * script every page embeds: `ui/initialize` to the host, then
 * `ui/notifications/initialized`; the host sends the tool's input and result
 * as notifications; `callTool` asks the host to call a tool of this server
 * (the refresh buttons); the page reports its height as it changes.
 */
export const BRIDGE_SCRIPT = `
const vn = (() => {
  let nextId = 1;
  const pending = new Map();
  const handlers = {};
  const post = (message) => window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  window.addEventListener('message', (event) => {
    const msg = event.data;
    if (!msg || msg.jsonrpc !== '2.0') return;
    if (msg.id !== undefined && pending.has(msg.id) && (msg.result !== undefined || msg.error !== undefined)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? reject(new Error(msg.error.message || 'request failed')) : resolve(msg.result);
      return;
    }
    if (msg.method && handlers[msg.method]) handlers[msg.method](msg.params || {});
  });
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    post({ id, method, params });
  });
  const reportSize = () => post({ method: 'ui/notifications/size-changed', params: { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight } });
  return {
    on(method, handler) { handlers[method] = handler; },
    callTool(name, args) { return request('tools/call', { name, arguments: args }); },
    async start(appName) {
      const init = await request('ui/initialize', { protocolVersion: '2026-01-26', appInfo: { name: appName, version: '1.0.0' }, appCapabilities: { availableDisplayModes: ['inline'] } });
      const theme = init && init.hostContext && init.hostContext.theme;
      if (theme) document.documentElement.dataset.theme = theme;
      post({ method: 'ui/notifications/initialized', params: {} });
      new ResizeObserver(reportSize).observe(document.body);
      return init;
    },
  };
})();
`;

export const BASE_STYLE = `
:root{color-scheme:light dark;--bg:var(--color-background-primary,#fff);--fg:var(--color-text-primary,#1d1f23);--muted:var(--color-text-secondary,#5b6170);--accent:#1f5fd1;--line:var(--color-border-primary,#e3e6eb)}
body{margin:0;padding:12px 14px;font:14px/1.45 var(--font-sans,system-ui,sans-serif);background:var(--bg);color:var(--fg)}
h1{font-size:16px;margin:0 0 6px}.muted{color:var(--muted)}.error{color:#b3261e}
button{font:inherit;padding:4px 10px;border-radius:6px;border:1px solid var(--line);background:transparent;color:var(--fg);cursor:pointer}
audio{width:100%;margin:8px 0}.bar{height:8px;border-radius:4px;background:var(--line);overflow:hidden}.bar>div{height:100%;background:var(--accent)}
ul{padding-left:18px;margin:6px 0}li{margin:2px 0}code{font-size:12px}
`;

/** A whole view page: its markup, then the bridge and the page's own script. */
export function viewPage(title: string, body: string, script: string): string {
  return `<!doctype html>
<html lang="vi"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>${BASE_STYLE}</style></head>
<body>${body}
<script>${BRIDGE_SCRIPT}
${script}</script></body></html>`;
}
