import './styles.css';
import { ApiFailure, api, consoleApi, currentSession, loadSession, onSignedOut, optionalJson } from './api.ts';
import { h, notice, replace } from './dom.ts';
import { currentLang, onLangChange, setLang, t, type MessageKey } from './i18n.ts';
import { currentRoute, here, href, navigate, returnAddress, startRouter, type Route } from './router.ts';
import type { Cleanup, PageModule } from './page.ts';

/**
 * The console's shell: skip link, navigation, language switch, the signed-in
 * user and sign-out, and the page of the current address. Pages are loaded
 * when first opened (the usage charts carry the chart library).
 */

interface NavItem {
  name: string;
  label: MessageKey;
  load: () => Promise<PageModule>;
  /** shown only when the server offers it (answers something other than 404) */
  optional?: () => Promise<boolean>;
}

const NAV: NavItem[] = [
  { name: 'keys', label: 'nav.keys', load: () => import('./pages/keys.ts') },
  { name: 'balance', label: 'nav.balance', load: () => import('./pages/balance.ts') },
  { name: 'usage', label: 'nav.usage', load: () => import('./pages/usage.ts') },
  { name: 'playground', label: 'nav.playground', load: () => import('./pages/playground.ts') },
  { name: 'webhooks', label: 'nav.webhooks', load: () => import('./pages/webhooks.ts') },
  { name: 'apps', label: 'nav.apps', load: () => import('./pages/apps.ts'), optional: () => offered(() => optionalJson('/oauth/connections')) },
  { name: 'audiobooks', label: 'nav.audiobooks', load: () => import('./pages/audiobooks.ts'), optional: () => offered(() => api('/audiobooks?limit=1')) },
];

/** false only when the route is missing: the plugin behind it is not loaded. */
async function offered(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    return (await probe()) !== null;
  } catch (err) {
    return !(err instanceof ApiFailure && err.status === 404);
  }
}

const available = new Map<string, boolean>();
let probed = false;
let cleanup: Cleanup | void;
let rendering = 0;
let firstPage = true;

const app = document.getElementById('app')!;

function shell(route: Route): HTMLElement {
  const session = currentSession();
  const other = currentLang() === 'vi' ? 'en' : 'vi';
  const nav = session.signedIn
    ? h('nav', { 'aria-label': t('nav.label') },
        h('ul', {}, NAV.filter((item) => available.get(item.name) !== false).map((item) =>
          h('li', {}, h('a', { href: href(item.name), 'aria-current': route.name === item.name ? 'page' : null }, t(item.label))))))
    : null;
  const signOut = h('button', { type: 'button', class: 'secondary small' }, t('user.signOut'));
  signOut.addEventListener('click', async () => {
    await consoleApi('/sign-out', { method: 'POST' }).catch(() => undefined);
    await loadSession();
    probed = false;
    available.clear();
    navigate('sign-in');
  });
  const langButton = h('button', { type: 'button', class: 'secondary small', lang: other, 'aria-label': t('lang.switchLabel') }, t('lang.switch'));
  langButton.addEventListener('click', () => setLang(other));
  return h('div', { class: 'shell' },
    h('a', { class: 'skip', href: '#main' }, t('skip')),
    h('header', { class: 'top' },
      h('a', { class: 'brand', href: href(session.signedIn ? 'keys' : 'sign-in') }, 'VieNeu ', h('span', {}, t('app.console'))),
      h('div', { class: 'who' },
        session.signedIn ? h('span', { class: 'email' }, session.user!.email) : null,
        langButton,
        session.signedIn ? signOut : null)),
    nav,
    h('main', { id: 'main', tabindex: -1 }),
    h('div', { id: 'announcer', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' }));
}

async function render(): Promise<void> {
  const ticket = ++rendering;
  cleanup?.();
  cleanup = undefined;
  const route = currentRoute();
  // The sign-in page is left only for a live session: the one in memory may have ended in another tab.
  if (route.name === 'sign-in' && currentSession().signedIn) await loadSession().catch(() => undefined);
  const session = currentSession();
  if (session.signedIn && !probed) await probeOptional();
  if (ticket !== rendering) return;
  if (!session.signedIn && route.name !== 'sign-in') return navigate(`sign-in?next=${encodeURIComponent(here())}`, true);
  if (session.signedIn && route.name === 'sign-in') return navigate(returnAddress(route) ?? 'keys', true);
  if (session.signedIn && route.name === '') return navigate('keys', true);
  const item = NAV.find((n) => n.name === route.name);
  if (item?.optional && available.get(item.name) === false) return navigate('keys', true);
  replace(app, shell(route));
  const main = document.getElementById('main')!;
  main.append(h('p', { class: 'loading' }, t('common.loading')));
  try {
    const page = route.name === 'sign-in' ? await import('./pages/sign-in.ts') : item ? await item.load() : null;
    if (ticket !== rendering) return;
    main.replaceChildren();
    if (!page) {
      main.append(h('h1', { tabindex: -1 }, t('notFound.title')), h('p', {}, h('a', { href: href('keys') }, t('notFound.back'))));
    } else {
      cleanup = await page.render(main, route);
    }
  } catch (err) {
    if (ticket !== rendering) return;
    main.replaceChildren(notice('error', t('common.error', { message: (err as Error).message })));
  }
  if (ticket !== rendering) return;
  const heading = main.querySelector('h1');
  document.title = `${heading?.textContent ?? 'VieNeu'} · VieNeu ${t('app.console')}`;
  // After a move inside the console, keyboard and screen-reader users land on the new page's heading;
  // a page just loaded starts at the top (the skip link first), as any page does.
  if (!firstPage && (document.activeElement === document.body || document.activeElement?.closest('nav, .top, form'))) (heading ?? main).focus();
  firstPage = false;
}

async function probeOptional(): Promise<void> {
  await Promise.all(NAV.filter((n) => n.optional).map(async (n) => available.set(n.name, await n.optional!())));
  probed = true;
}

async function boot(): Promise<void> {
  document.documentElement.lang = currentLang();
  startRouter(() => void render());
  onLangChange(() => void render());
  onSignedOut(() => {
    if (currentRoute().name !== 'sign-in') navigate(`sign-in?next=${encodeURIComponent(here())}`, true);
  });
  await loadSession();
  await render();
}

void boot();
