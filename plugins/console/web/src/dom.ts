/**
 * A small DOM builder: every node is made with createElement and text
 * nodes, never from HTML strings, so nothing an API returns can become
 * markup (and the page's CSP needs no inline anything).
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<Child | Child[]>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Array<Child | Child[]>): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function replace(parent: Element, ...children: Array<Child | Child[]>): void {
  parent.replaceChildren();
  append(parent, children);
}

let idCounter = 0;
/** An id unique in the page, for label/aria wiring. */
export function uid(prefix: string): string {
  return `${prefix}-${++idCounter}`;
}

/** A labelled form field: the label names the control for screen readers. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid('f');
  control.id = id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/** Polite announcements for screen readers (results of actions, background changes). */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  // A change after a tick is announced even when the text repeats.
  setTimeout(() => (region.textContent = message), 30);
}

/**
 * A message box inside a page. Errors are alerts (read at once); other
 * notices are announced by the caller through `announce`, so nothing is read twice.
 */
export function notice(kind: 'error' | 'info' | 'success', ...children: Array<Child | Child[]>): HTMLElement {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : null }, ...children);
}

/** Copies text and says so on the button. */
export function copyButton(label: string, copiedLabel: string, text: () => string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary small' }, label);
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = copiedLabel;
      announce(copiedLabel);
      setTimeout(() => (button.textContent = label), 2000);
    } catch {
      // Clipboard refused (permissions): select the text for a manual copy instead.
      const pre = button.closest('.copyable')?.querySelector('pre, code, output');
      if (pre) window.getSelection()?.selectAllChildren(pre);
    }
  });
  return button;
}

/** A block of code with a copy button. */
export function codeBlock(title: string, code: string, labels: { copy: string; copied: string }): HTMLElement {
  return h('div', { class: 'copyable' },
    h('div', { class: 'copyable-head' }, h('span', {}, title), copyButton(labels.copy, labels.copied, () => code)),
    h('pre', { tabindex: 0 }, h('code', {}, code)));
}

/**
 * A button that shows it is busy while `work` runs, and cannot be pressed
 * twice. Disabling a focused button drops focus to <body>: it gets it back
 * unless the work moved focus on (or rebuilt the button away, and then the
 * work itself says where focus goes, through `focusResult`).
 */
export async function busy<T>(button: HTMLButtonElement, work: () => Promise<T>): Promise<T> {
  const hadFocus = document.activeElement === button;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    const lost = document.activeElement === null || document.activeElement === document.body || document.activeElement === button;
    if (hadFocus && button.isConnected && lost) button.focus();
  }
}

/**
 * Moves keyboard focus to the result of an action that rebuilt the part of
 * the page holding its button (a revoked key's row, a deleted endpoint), so
 * it does not fall back to the start of the page. A message gets tabindex -1
 * to take it, and is read as it does.
 */
export function focusResult(el: HTMLElement | null | undefined): void {
  if (!el) return;
  if (!el.matches('a[href], button, input, select, textarea, [tabindex]')) el.tabIndex = -1;
  el.focus();
}
