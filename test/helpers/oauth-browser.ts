/**
 * A person at a browser, for the OAuth tests: keeps cookies, follows
 * redirects itself (so a test can stop at the client's redirect URI), reads
 * the forms of the sign-in and consent pages and submits them.
 */
export class TestBrowser {
  private readonly jar = new Map<string, string>();

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expires = attributes.map((a) => a.trim()).find((a) => /^expires=/i.test(a));
      if (!value || (expires && Date.parse(expires.slice(8)) <= Date.now())) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects until a page answers or `stop(url)` says the next address is where the test takes over. */
  async follow(url: string, init: RequestInit = {}, stop: (url: string) => boolean = () => false): Promise<{ url: string; res: Response }> {
    let current = url;
    let res = await this.request(current, init);
    for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 20; hops++) {
      current = new URL(res.headers.get('location')!, current).href;
      await res.arrayBuffer();
      if (stop(current)) return { url: current, res };
      res = await this.request(current);
    }
    return { url: current, res };
  }

  /** Submits a page's form (the first post form, or the one whose action contains `actionPart`). */
  async submit(pageUrl: string, html: string, values: Record<string, string>, stop?: (url: string) => boolean, actionPart?: string) {
    const form = formOf(html, actionPart);
    const body = new URLSearchParams({ ...form.fields, ...values });
    return this.follow(new URL(form.action, pageUrl).href, {
      method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(pageUrl).origin },
    }, stop);
  }
}

const unescape = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

export function formOf(html: string, actionPart?: string): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)]
    .map((f) => ({ attributes: f[1], body: f[2], action: unescape(/\baction="([^"]*)"/.exec(f[1])?.[1] ?? '') }))
    .filter((f) => /\bmethod="post"/i.test(f.attributes));
  const match = forms.find((f) => !actionPart || f.action.includes(actionPart));
  if (!match) throw new Error(`no form${actionPart ? ` with action containing ${actionPart}` : ''} in page:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const input of match.body.matchAll(/<input\b([^>]*)>/g)) {
    const attributes = input[1];
    const name = /\bname="([^"]+)"/.exec(attributes)?.[1];
    const value = /\bvalue="([^"]*)"/.exec(attributes)?.[1];
    if (name && /\btype="hidden"/.test(attributes)) fields[name] = unescape(value ?? '');
  }
  return { action: match.action, fields };
}

/** The address of the first link whose text contains `text`. */
export function linkOf(html: string, text: string): string {
  for (const a of html.matchAll(/<a\b[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)) if (a[2].includes(text)) return unescape(a[1]);
  throw new Error(`no link "${text}" in page:\n${html.slice(0, 1500)}`);
}
