import { createHash } from 'node:crypto';
import { describeTool, invokeTool, type CallToolResult, type ToolContext, type ToolDefinition } from './tool.ts';
import { prompts as promptList, type PromptDefinition } from './prompts.ts';
import { MCP_APP_MIME, uiResources, type UiResource } from './ui/resources.ts';
import { getSpeechStatus, textToSpeech } from './tools/speech.ts';
import { getTokenBalance, listCapabilities, listEmotionTags, listVoices } from './tools/catalog.ts';
import { audiobookTools } from './tools/audiobooks.ts';

/**
 * What the MCP server offers, independent of the protocol revision a client
 * speaks: tools, prompts and the MCP Apps views. Both transports (the SDK's
 * for 2025-era clients, the stateless 2026-07-28 one) answer from this.
 */

/** A JSON-RPC error the transports send as such (unknown tool, prompt or resource, bad params). */
export class McpProtocolError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'McpProtocolError';
  }
}

export const INVALID_PARAMS = -32602;

export interface McpServerDefinition {
  info: { name: string; title: string; version: string };
  instructions: string;
  tools: ToolDefinition[];
  listTools(): Array<Record<string, unknown>>;
  callTool(name: string, args: unknown, ctx: ToolContext): Promise<CallToolResult>;
  listPrompts(): Array<Record<string, unknown>>;
  /** `args` as the client sent them: refused unless an object of strings (MCP's prompt arguments) */
  getPrompt(name: string, args: unknown): Record<string, unknown>;
  listResources(): Array<Record<string, unknown>>;
  readResource(uri: string): Record<string, unknown>;
}

/** `serverInfo.version`: the tool list's own fingerprint, so it changes whenever a tool (name, text or schema) does. */
export function versionOf(tools: Array<Record<string, unknown>>): string {
  return `1.0.0+tools.${createHash('sha256').update(JSON.stringify(tools)).digest('hex').slice(0, 12)}`;
}

export function createMcpServerDefinition(options: { audiobooks: boolean; baseUrl: () => string }): McpServerDefinition {
  const tools: ToolDefinition[] = [];
  const prompts: PromptDefinition[] = promptList(options.audiobooks);
  const capabilities = listCapabilities(() => ({
    tools: tools.map((t) => ({ name: t.name, title: t.title, paid: t.paid })), prompts: prompts.map((p) => p.name), audiobooks: options.audiobooks,
  }));
  tools.push(capabilities, listVoices, textToSpeech, getSpeechStatus, listEmotionTags, getTokenBalance);
  if (options.audiobooks) tools.push(...audiobookTools);
  const described = tools.map(describeTool);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const resources: UiResource[] = uiResources();

  return {
    info: { name: 'vieneu', title: 'VieNeu text-to-speech', version: versionOf(described) },
    instructions: 'VieNeu turns Vietnamese text into speech. Use list_voices to pick a voice, text_to_speech to make audio (a 24-hour link), ' +
      'get_token_balance to see what the user can spend' + (options.audiobooks ? ', and the audiobook tools for long books with several voices' : '') + '.',
    tools,
    listTools: () => described,
    async callTool(name, args, ctx) {
      const tool = byName.get(name);
      if (!tool) throw new McpProtocolError(INVALID_PARAMS, `Unknown tool "${name}". Call tools/list for the tools of this server.`);
      return invokeTool(tool, args, ctx);
    },
    listPrompts: () => prompts.map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args })),
    getPrompt(name, given) {
      const prompt = prompts.find((p) => p.name === name);
      if (!prompt) throw new McpProtocolError(INVALID_PARAMS, `Unknown prompt "${name}".`);
      if (given !== undefined && (given === null || typeof given !== 'object' || Array.isArray(given) || Object.values(given).some((v) => typeof v !== 'string'))) {
        throw new McpProtocolError(INVALID_PARAMS, `Prompt "${name}" takes its arguments as an object of strings.`);
      }
      const args = (given ?? {}) as Record<string, string>;
      const missing = prompt.arguments.filter((a) => a.required && !args[a.name]?.trim()).map((a) => a.name);
      if (missing.length) throw new McpProtocolError(INVALID_PARAMS, `Prompt "${name}" needs ${missing.join(', ')}.`);
      return { description: prompt.description, messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }] };
    },
    listResources: () => resources.map(({ uri, name, title, description }) => ({ uri, name, title, description, mimeType: MCP_APP_MIME })),
    readResource(uri) {
      const resource = resources.find((r) => r.uri === uri);
      if (!resource) throw new McpProtocolError(INVALID_PARAMS, `Unknown resource "${uri}".`, { uri });
      // Audio links point at this service's /files: the view may load media from its origin, and nothing else.
      const origin = new URL(options.baseUrl()).origin;
      return {
        contents: [{
          uri, mimeType: MCP_APP_MIME, text: resource.html,
          _meta: { ui: { csp: { resourceDomains: [origin], connectDomains: [] }, prefersBorder: true } },
        }],
      };
    },
  };
}
