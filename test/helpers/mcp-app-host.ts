/**
 * A minimal MCP Apps host page for the browser tests (SEP-1865): it renders
 * a `ui://` resource in a sandboxed iframe under the CSP the resource
 * declares, answers `ui/initialize`, sends the tool input and result once the
 * view says it is initialized, and forwards the view's `tools/call` requests
 * to `window.hostCallTool` (a real MCP call the test exposes).
 */

interface CspMeta {
  connectDomains?: string[];
  resourceDomains?: string[];
}

/** The CSP a host builds from the resource's `_meta.ui.csp` (SEP-1865 "Host Behavior"). */
export function viewCsp(csp: CspMeta | undefined): string {
  const resources = (csp?.resourceDomains ?? []).join(' ');
  const connect = (csp?.connectDomains ?? []).join(' ') || "'none'";
  return [
    "default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'", `img-src data: ${resources}`.trim(),
    `media-src data: ${resources}`.trim(), `connect-src ${connect}`, "frame-src 'none'", "object-src 'none'", "base-uri 'none'",
  ].join('; ');
}

export function hostPage(options: { html: string; csp?: CspMeta; toolInput: unknown; toolResult: unknown }): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${viewCsp(options.csp).replace(/"/g, '&quot;')}">`;
  const srcdoc = options.html.replace('<head>', `<head>${meta}`);
  const data = JSON.stringify({ srcdoc, toolInput: options.toolInput, toolResult: options.toolResult }).replace(/</g, '\\u003c');
  return `<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0;background:#eef0f3}iframe{border:0;width:560px;height:420px;background:#fff;margin:12px;box-shadow:0 1px 4px #0003}</style></head>
<body><iframe id="view" sandbox="allow-scripts"></iframe>
<script>
const data = ${data};
window.hostLog = [];
const frame = document.getElementById('view');
const send = (msg) => frame.contentWindow.postMessage({ jsonrpc: '2.0', ...msg }, '*');
window.addEventListener('message', async (event) => {
  if (event.source !== frame.contentWindow) return;
  const msg = event.data;
  window.hostLog.push(msg.method || ('response ' + msg.id));
  if (msg.method === 'ui/initialize') {
    send({ id: msg.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'test-host', version: '1' }, hostCapabilities: { serverTools: {} }, hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' } } });
  } else if (msg.method === 'ui/notifications/initialized') {
    send({ method: 'ui/notifications/tool-input', params: { arguments: data.toolInput } });
    send({ method: 'ui/notifications/tool-result', params: data.toolResult });
  } else if (msg.method === 'tools/call') {
    try { send({ id: msg.id, result: await window.hostCallTool(msg.params.name, msg.params.arguments) }); }
    catch (err) { send({ id: msg.id, error: { code: -32000, message: String(err) } }); }
  } else if (msg.method === 'ui/notifications/size-changed') {
    window.lastSize = msg.params;
  }
});
frame.srcdoc = data.srcdoc;
</script></body></html>`;
}
