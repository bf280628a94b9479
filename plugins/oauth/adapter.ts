import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from './store.ts';

/**
 * oidc-provider's storage adapter (one instance per model name) over the
 * plugin's OAuth store. `expiresIn` is in seconds, as the library gives it.
 */
export function adapterFactory(store: OAuthStore): (model: string) => Adapter {
  return (model) => ({
    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      await store.upsert({ model, id, payload: payload as Record<string, unknown>, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : null });
    },
    async find(id: string) {
      return ((await store.find(model, id, Date.now())) ?? undefined) as AdapterPayload | undefined;
    },
    async findByUid(uid: string) {
      return ((await store.findByUid(model, uid, Date.now())) ?? undefined) as AdapterPayload | undefined;
    },
    async findByUserCode(userCode: string) {
      return ((await store.findByUserCode(model, userCode, Date.now())) ?? undefined) as AdapterPayload | undefined;
    },
    async consume(id: string) {
      await store.consume(model, id, Math.floor(Date.now() / 1000));
    },
    async destroy(id: string) {
      await store.destroy(model, id);
    },
    async revokeByGrantId(grantId: string) {
      await store.revokeByGrantId(model, grantId);
    },
  });
}
