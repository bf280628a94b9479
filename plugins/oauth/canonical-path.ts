/**
 * One spelling of an `/oauth/...` path: its first segment (the endpoint's
 * name, never an id) in lower case, and no trailing slash. oidc-provider's
 * router folds case and drops one trailing slash itself, so without this a
 * rule that compares paths (the scope filter, the registration limit, CORS)
 * could be stepped around with `/oauth/Authorize/`. Ids after the first
 * segment (`/oauth/interaction/{uid}`) keep their case.
 */
export function canonicalOAuthPath(path: string): string {
  const match = /^\/oauth\/([^/]+)(\/.*)?$/.exec(path);
  if (!match) return path;
  const rest = (match[2] ?? '').replace(/\/+$/, '');
  return `/oauth/${match[1].toLowerCase()}${rest}`;
}
