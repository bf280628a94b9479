/**
 * Addresses under /console/ (history API): each page has its own URL, the
 * back button works, and a reload lands on the same page (the server answers
 * every /console address with the one page).
 */

export const BASE = '/console';

export interface Route {
  /** first path segment after /console/ ('' for the start page) */
  name: string;
  /** the rest, e.g. a book id */
  param: string | null;
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  const [name = '', param = null] = rest.split('/').filter(Boolean).map(decodeURIComponent);
  return { name, param, query: new URLSearchParams(location.search) };
}

export const href = (path: string) => `${BASE}/${path.replace(/^\//, '')}`;

/** The address of this page, to come back to after signing in (`sign-in?next=`). */
export const here = () => location.pathname + location.search;

/** Where signing in leads: the `next` the sign-in page was given, when it is one of the console's own pages. */
export function returnAddress(route: Route): string | null {
  const next = route.query.get('next');
  return next && next.startsWith(`${BASE}/`) && !next.startsWith(`${BASE}/sign-in`) ? next : null;
}

let onNavigate: () => void = () => undefined;

export function startRouter(render: () => void): void {
  onNavigate = render;
  window.addEventListener('popstate', () => onNavigate());
  // Links inside the console change the page without a reload.
  document.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest('a');
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (link.target || link.hasAttribute('download') || link.origin !== location.origin || !link.pathname.startsWith(`${BASE}/`)) return;
    // A link within the page (the skip link) keeps the browser's own behaviour: it moves focus.
    if (link.hash && link.pathname === location.pathname && link.search === location.search) return;
    event.preventDefault();
    navigate(link.pathname + link.search);
  });
}

export function navigate(path: string, replace = false): void {
  const target = path.startsWith(BASE) ? path : href(path);
  if (replace) history.replaceState(null, '', target);
  else history.pushState(null, '', target);
  onNavigate();
}
