import Joi from 'joi';
import type { OperationDoc } from '../../core/plugin.ts';

/**
 * The public endpoints of the authorization server, for the API reference
 * (SPEC Authentication 7). The bodies are oidc-provider's: the fields below
 * are those the RFCs and SPEC name; the library may add others, so the
 * objects are open.
 */

const FORM = 'application/x-www-form-urlencoded';

const oauthError = Joi.object({
  error: Joi.string().required().example('invalid_grant'),
  error_description: Joi.string(),
}).unknown(true).description('OAuth error (RFC 6749 5.2)');

const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'];

const serverMetadata = Joi.object({
  issuer: Joi.string().uri().required(),
  authorization_endpoint: Joi.string().uri().required(),
  token_endpoint: Joi.string().uri().required(),
  registration_endpoint: Joi.string().uri().required(),
  revocation_endpoint: Joi.string().uri(),
  scopes_supported: Joi.array().items(Joi.string()).required(),
  response_types_supported: Joi.array().items(Joi.string()).required(),
  grant_types_supported: Joi.array().items(Joi.string()),
  code_challenge_methods_supported: Joi.array().items(Joi.string()).required(),
  token_endpoint_auth_methods_supported: Joi.array().items(Joi.string()),
  client_id_metadata_document_supported: Joi.boolean(),
}).unknown(true).description('Authorization server metadata (RFC 8414)');

const registrationRequest = Joi.object({
  redirect_uris: Joi.array().items(Joi.string().uri()).min(1).required().description('https, or http on a loopback host only (`http://127.0.0.1`, `localhost`, `[::1]`: these match on any port); anything else is `invalid_redirect_uri`'),
  client_name: Joi.string().example('Trợ lý đọc báo'),
  token_endpoint_auth_method: Joi.string().valid(...AUTH_METHODS).description('`none` for public clients; a secret is needed only for the other two'),
  grant_types: Joi.array().items(Joi.string().valid('authorization_code', 'refresh_token')),
  response_types: Joi.array().items(Joi.string().valid('code')),
  scope: Joi.string().example('tts offline_access'),
}).unknown(true).example({
  client_name: 'Trợ lý đọc báo', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
});

const registrationResponse = Joi.object({
  client_id: Joi.string().required(),
  client_secret: Joi.string().required().description('always returned; required only by the two secret methods (a `none` client may send it too)'),
  redirect_uris: Joi.array().items(Joi.string()).required(),
  token_endpoint_auth_method: Joi.string().valid(...AUTH_METHODS).required(),
}).unknown(true);

const tokenRequest = Joi.object({
  grant_type: Joi.string().valid('authorization_code', 'refresh_token').required(),
  code: Joi.string().description('authorization_code: the code from the redirect'),
  redirect_uri: Joi.string().description('authorization_code: as in the authorization request'),
  code_verifier: Joi.string().description('authorization_code: the PKCE verifier (S256 is required)'),
  refresh_token: Joi.string().description('refresh_token: rotates on every use'),
  resource: Joi.string().description('`{base_url}/mcp` or `{base_url}/api/v1`'),
  client_id: Joi.string(),
  client_secret: Joi.string(),
}).unknown(true);

const tokenResponse = Joi.object({
  access_token: Joi.string().required().description('opaque, valid one hour; accepted by /mcp and every /api/v1 route as a bearer token'),
  token_type: Joi.string().valid('Bearer').required(),
  expires_in: Joi.number().integer().required(),
  refresh_token: Joi.string().description('with `offline_access`; replaced at every refresh'),
  scope: Joi.string(),
}).unknown(true);

const authorizeQuery = Joi.object({
  response_type: Joi.string().valid('code').required(),
  client_id: Joi.string().required().description('a registered client id, or the URL of a client ID metadata document'),
  redirect_uri: Joi.string().required(),
  code_challenge: Joi.string().required(),
  code_challenge_method: Joi.string().valid('S256').required(),
  scope: Joi.string().example('tts offline_access'),
  state: Joi.string(),
  resource: Joi.string().description('`{base_url}/mcp` or `{base_url}/api/v1`'),
});

const redirect = (description: string) => ({ description, headers: { Location: { description: 'where the browser goes next', required: true } } });

export const OAUTH_OPERATIONS: OperationDoc[] = [
  {
    method: 'GET', path: '/.well-known/oauth-authorization-server', name: 'oauth_metadata',
    summary: 'Authorization server metadata (RFC 8414)',
    responses: { 200: { description: 'The metadata', schema: serverMetadata } },
  },
  {
    method: 'POST', path: '/oauth/register', name: 'oauth_register',
    summary: 'Dynamic client registration (RFC 7591)',
    description: 'Open to every client, limited per source address (OAUTH_REGISTRATIONS_PER_HOUR).',
    request: { body: registrationRequest },
    responses: {
      201: { description: 'The client; `client_secret` is always returned', schema: registrationResponse },
      400: { description: 'Invalid client metadata or redirect URI', schema: oauthError },
      429: { description: 'Too many registrations from this address, refused ones included: `temporarily_unavailable`, with Retry-After', schema: oauthError, headers: { 'Retry-After': { description: 'seconds', schema: Joi.number().integer(), required: true } } },
    },
  },
  {
    method: 'GET', path: '/oauth/authorize', name: 'oauth_authorize',
    summary: 'Authorization endpoint: code flow with PKCE S256',
    description: 'Opened in the person\'s browser: sign-in and consent pages follow, then a redirect to `redirect_uri` with `code` and `state`. Scope `tts`, plus `offline_access` for a refresh token.',
    request: { query: authorizeQuery },
    responses: {
      302: redirect('On to sign-in and consent, or back to the client with `code` (or `error`)'),
      303: redirect('On to sign-in and consent, or back to the client with `code` (or `error`)'),
      400: { description: 'A request that cannot be sent back to the client (unknown client, redirect URI not registered): an HTML page', contentType: 'text/html' },
    },
  },
  {
    method: 'POST', path: '/oauth/token', name: 'oauth_token',
    summary: 'Token endpoint: exchange a code, or refresh',
    request: { body: tokenRequest, bodyContentType: FORM },
    responses: {
      200: { description: 'Tokens', schema: tokenResponse },
      400: { description: '`invalid_grant`, `invalid_request`, `invalid_target`…', schema: oauthError },
      401: { description: '`invalid_client`', schema: oauthError },
    },
  },
  {
    method: 'POST', path: '/oauth/revoke', name: 'oauth_revoke',
    summary: 'Token revocation (RFC 7009)',
    request: { body: Joi.object({ token: Joi.string().required(), token_type_hint: Joi.string().valid('access_token', 'refresh_token') }).unknown(true), bodyContentType: FORM },
    responses: {
      200: { description: 'Revoked (also for a token that was not valid)' },
      400: { description: 'A malformed request', schema: oauthError },
      401: { description: '`invalid_client`', schema: oauthError },
    },
  },
];

export const OAUTH_SECURITY_SCHEMES = {
  oauth2: {
    type: 'oauth2',
    description: 'OAuth 2.1 authorization code with PKCE S256 (always). Clients register at /oauth/register or use a client ID metadata document. Access tokens last one hour; refresh tokens rotate on every use.',
    flows: {
      authorizationCode: {
        authorizationUrl: '/oauth/authorize',
        tokenUrl: '/oauth/token',
        refreshUrl: '/oauth/token',
        scopes: { tts: 'speech, voices, balance and audiobooks on behalf of the signed-in user', offline_access: 'a refresh token' },
      },
    },
  },
};
