import Joi from 'joi';
import type { OperationDoc } from '../../core/plugin.ts';

/** `/.well-known/oauth-protected-resource` (RFC 9728), where MCP clients start the OAuth flow, for the API reference. */
export const PROTECTED_RESOURCE_OPERATION: OperationDoc = {
  method: 'GET', path: '/.well-known/oauth-protected-resource', name: 'mcp_protected_resource',
  summary: 'Protected resource metadata of the MCP server (RFC 9728)',
  description: 'An unauthenticated request to `/mcp` gets 401 with `WWW-Authenticate: Bearer resource_metadata="{base_url}/.well-known/oauth-protected-resource"`; this document names the authorization server. Also served at `/.well-known/oauth-protected-resource/mcp`.',
  responses: {
    200: {
      description: 'The metadata',
      schema: Joi.object({
        resource: Joi.string().uri().required().description('`{base_url}/mcp`'),
        authorization_servers: Joi.array().items(Joi.string().uri()).required(),
        scopes_supported: Joi.array().items(Joi.string()).required().example(['tts', 'offline_access']),
        bearer_methods_supported: Joi.array().items(Joi.string()).required(),
        resource_name: Joi.string().required(),
        resource_documentation: Joi.string().uri().required().description('the API reference page, `{base_url}/docs`'),
      }),
    },
  },
};
