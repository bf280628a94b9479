import { escapeHtml as e } from '../../core/http/page-security.ts';

/**
 * The HTML of the sign-in, consent and connected-apps pages: plain forms, no
 * script, one nonce-tagged style block (the pages' CSP allows nothing else).
 */

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
main{max-width:28rem;margin:3rem auto;background:#fff;border-radius:10px;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #bbb;border-radius:6px;font:inherit}
button,.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#1f5fd1;color:#fff;font:inherit;cursor:pointer;text-decoration:none}
button.secondary{background:#e3e6eb;color:#1d1f23}.error{background:#fdecea;color:#8a1c12;padding:.6rem .8rem;border-radius:6px}
.note{color:#555;font-size:.9rem}ul.scopes{padding-left:1.2rem}table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #eee}
form.inline{display:inline}`;

export function page(nonce: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(title)} · VieNeu</title><style nonce="${e(nonce)}">${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

const errorBox = (error: string | null) => (error ? `<p class="error" role="alert">${e(error)}</p>` : '');

export interface SignInView {
  action: string;
  csrf: string;
  email?: string;
  error?: string | null;
  /** "Sign in with …" link of the upstream provider, when configured */
  upstream?: { label: string; href: string } | null;
  /** who asks (on the OAuth login prompt) */
  clientName?: string | null;
}

export function signInBody(v: SignInView): string {
  const who = v.clientName ? `<p class="note">Sign in to connect <strong>${e(v.clientName)}</strong> to your VieNeu account.</p>` : '';
  const upstream = v.upstream ? `<p><a class="button" href="${e(v.upstream.href)}">Sign in with ${e(v.upstream.label)}</a></p>` : '';
  return `<h1>Sign in</h1>${who}${errorBox(v.error ?? null)}
<form method="post" action="${e(v.action)}">
<input type="hidden" name="csrf" value="${e(v.csrf)}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${e(v.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>${upstream}`;
}

const SCOPE_WORDS: Record<string, string> = {
  tts: 'Make speech and audiobooks with your VieNeu voices, paid from your plan\'s tokens, and read your balance',
  offline_access: 'Stay connected while you are away (it can renew its access without asking you again)',
};

export interface ConsentView {
  action: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  userEmail: string;
  scopes: string[];
}

export function consentBody(v: ConsentView): string {
  const items = v.scopes.map((s) => `<li>${e(SCOPE_WORDS[s] ?? s)}</li>`).join('');
  return `<h1>Connect ${e(v.clientName)}?</h1>
<p><strong>${e(v.clientName)}</strong> wants to use your VieNeu account <strong>${e(v.userEmail)}</strong>. It will be able to:</p>
<ul class="scopes">${items}</ul>
<p class="note">After you allow it you are sent back to ${e(v.redirectHost)}. You can disconnect it at any time under Connected apps.</p>
<form method="post" action="${e(v.action)}">
<input type="hidden" name="csrf" value="${e(v.csrf)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`;
}

export interface ConnectedAppView {
  clientId: string;
  clientName: string;
  scopes: string[];
  connectedAt: string;
}

export function connectedAppsBody(v: { apps: ConnectedAppView[]; csrf: string; userEmail: string; notice?: string | null }): string {
  const rows = v.apps.map((app) => `<tr><td><strong>${e(app.clientName)}</strong><br><span class="note">${e(app.scopes.join(', '))} · since ${e(app.connectedAt.slice(0, 10))}</span></td>
<td><form class="inline" method="post" action="/oauth/connected-apps/${encodeURIComponent(app.clientId)}/disconnect">
<input type="hidden" name="csrf" value="${e(v.csrf)}"><button type="submit" class="secondary">Disconnect</button></form></td></tr>`).join('');
  const notice = v.notice ? `<p class="note" role="status">${e(v.notice)}</p>` : '';
  return `<h1>Connected apps</h1><p class="note">Signed in as ${e(v.userEmail)}.</p>${notice}
${v.apps.length ? `<table>${rows}</table>` : '<p>No app is connected to your account.</p>'}
<form method="post" action="/oauth/sign-out"><input type="hidden" name="csrf" value="${e(v.csrf)}"><button type="submit" class="secondary">Sign out</button></form>`;
}

export function messageBody(title: string, message: string): string {
  return `<h1>${e(title)}</h1><p>${e(message)}</p>`;
}
