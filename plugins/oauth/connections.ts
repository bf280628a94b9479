import type Provider from 'oidc-provider';
import type { OAuthStore } from './store.ts';

/**
 * Connected apps: the clients a user has authorized (oidc-provider grants),
 * and disconnecting one, which removes its grants and every code and token
 * issued under them, so its access tokens stop working on the next request.
 */

export interface ConnectedApp {
  clientId: string;
  clientName: string;
  scopes: string[];
  connectedAt: string;
}

const TOKEN_MODELS = ['AccessToken', 'RefreshToken', 'AuthorizationCode'];

interface GrantPayload {
  clientId?: string;
  iat?: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

function scopesOf(grant: GrantPayload): string[] {
  const scopes = new Set<string>();
  for (const s of (grant.openid?.scope ?? '').split(' ')) if (s) scopes.add(s);
  for (const value of Object.values(grant.resources ?? {})) for (const s of value.split(' ')) if (s) scopes.add(s);
  return [...scopes].sort();
}

export function createConnections(store: OAuthStore, provider: () => Promise<Provider>) {
  async function grantsOf(userId: string) {
    return (await store.listByAccount('Grant', userId, Date.now())).map((g) => ({ id: g.id, grant: g.payload as GrantPayload }));
  }

  return {
    async list(userId: string): Promise<ConnectedApp[]> {
      const byClient = new Map<string, ConnectedApp>();
      for (const { grant } of await grantsOf(userId)) {
        if (!grant.clientId) continue;
        const connectedAt = new Date((grant.iat ?? 0) * 1000).toISOString();
        const app = byClient.get(grant.clientId) ?? { clientId: grant.clientId, clientName: grant.clientId, scopes: [], connectedAt };
        app.scopes = [...new Set([...app.scopes, ...scopesOf(grant)])].sort();
        if (connectedAt < app.connectedAt) app.connectedAt = connectedAt;
        byClient.set(grant.clientId, app);
      }
      const op = await provider();
      for (const app of byClient.values()) {
        const client = await op.Client.find(app.clientId).catch(() => undefined);
        if (client?.clientName) app.clientName = String(client.clientName);
      }
      return [...byClient.values()].sort((a, b) => a.connectedAt.localeCompare(b.connectedAt));
    },

    /** returns how many grants ended */
    async disconnect(userId: string, clientId: string): Promise<number> {
      const grants = (await grantsOf(userId)).filter((g) => g.grant.clientId === clientId);
      for (const { id } of grants) {
        for (const model of TOKEN_MODELS) await store.revokeByGrantId(model, id);
        await store.destroy('Grant', id);
      }
      return grants.length;
    },
  };
}

export type Connections = ReturnType<typeof createConnections>;
