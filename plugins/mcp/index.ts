import Joi from 'joi';
import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { createMcpServerDefinition } from './server.ts';
import { mcpHttp, protectedResourceMetadata } from './http.ts';
import { PROTECTED_RESOURCE_OPERATION } from './schemas.ts';

interface McpConfig {
  MCP_TTS_WAIT_SECONDS: number;
  MCP_POLL_MS: number;
  MCP_ALLOWED_ORIGINS: string;
}

/**
 * The hosted MCP server at `{base_url}/mcp` (SPEC MCP server): speech,
 * voice search, balance and audiobook tools, prompts and MCP Apps views,
 * for AI assistants signed in with OAuth (plugins/oauth) or an API key.
 * Every tool that does work calls the platform's own /api/v1 routes with the
 * caller's credential, so it is billed, counted and limited as they are.
 */
/**
 * The origins, each as a browser sends it in `Origin`: `https://app.example.com/`
 * copied from an address bar never matched (no Origin has a slash), and a
 * value that is no origin at all was taken silently.
 */
function originList(value: string, helpers: Joi.CustomHelpers): string | Joi.ErrorReport {
  const entries = value.split(',').map((o) => o.trim()).filter(Boolean);
  const origins: string[] = [];
  for (const entry of entries) {
    if (entry === '*') {
      origins.push(entry);
      continue;
    }
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch { /* refused below */ }
    const bare = url !== null && (url.protocol === 'https:' || url.protocol === 'http:') && url.pathname === '/' && !url.search && !url.hash && !url.username;
    if (!bare) return helpers.error('origins.invalid', { entry });
    origins.push(url!.origin);
  }
  return origins.join(',');
}

export default definePlugin({
  id: 'mcp',
  version: '1.0.0',
  coreApi: 2,
  description: 'MCP server (Streamable HTTP, stateless): speech and audiobook tools, prompts, UI resources',
  // The routes the tools call; the authorization server whose tokens it accepts.
  dependsOn: ['oauth', 'catalog', 'account', 'speech', 'jobs'],
  deps: { config: coreServices.config, keys: coreServices.keys, documents: coreServices.documents, selfApi: coreServices.selfApi, logger: coreServices.logger },
  config: Joi.object<McpConfig>({
    MCP_TTS_WAIT_SECONDS: Joi.number().min(0).max(300).default(50),
    MCP_POLL_MS: Joi.number().integer().min(50).max(10_000).default(1000),
    MCP_ALLOWED_ORIGINS: Joi.string().allow('').default('').custom(originList).messages({
      'origins.invalid': '"MCP_ALLOWED_ORIGINS" entry "{#entry}" is not an origin: write scheme://host[:port] (a browser\'s Origin header has no path), or *',
    }),
  }),
  register({ deps, config, mount }) {
    // The audiobook tools exist when the audiobooks plugin serves their routes.
    const def = createMcpServerDefinition({ audiobooks: deps.config.plugins.includes('audiobooks'), baseUrl: () => deps.selfApi.publicBaseUrl() });
    mount({
      prefix: '/mcp',
      middleware: mcpHttp({
        def, keys: deps.keys, documents: deps.documents, selfApi: deps.selfApi, logger: deps.logger,
        allowedOrigins: config.MCP_ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
        waitSeconds: config.MCP_TTS_WAIT_SECONDS, pollMs: config.MCP_POLL_MS,
      }),
    });
    mount({ prefix: '/.well-known/oauth-protected-resource', middleware: protectedResourceMetadata(deps.selfApi), operations: [PROTECTED_RESOURCE_OPERATION] });
  },
});
