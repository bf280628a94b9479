import type { VoiceProfile } from './ports/engine.ts';
import type { ClonesStore } from './ports/documents.ts';
import type { EngineInfo } from '../config/engines.ts';
import { RETIRED_ENGINES } from '../config/engines.ts';
import { DomainError, RETIRED_ENGINE_MESSAGE } from './errors.ts';

/** A voice as `GET /voices` shows it. */
export interface PublicVoice {
  id: string;
  name: string;
  description: string | null;
  gender: string | null;
  region: string | null;
  engine: string;
  kind: 'catalog' | 'cloned';
}

export interface ResolveVoiceInput {
  /** id or display name; empty means the default voice */
  voice: string | null | undefined;
  engine: string;
  accountId: string | null;
  allowClones: boolean;
  /** request field named in errors (`voiceId`, `voice`) */
  param: string;
}

/** Engines and voices: the catalogue from configuration plus the account's own clones. */
export interface VoiceCatalog {
  engines(): EngineInfo[];
  defaultEngine(): string;
  /** validates an engine named by a request; 400 for retired or unknown engines */
  resolveEngine(value: string | null | undefined, param?: string): string;
  list(options: { engine?: string; accountId?: string | null }): Promise<PublicVoice[]>;
  resolve(input: ResolveVoiceInput): Promise<VoiceProfile>;
  publicView(voice: VoiceProfile): PublicVoice;
}

export function retiredEngineError(param: string): DomainError {
  return new DomainError('invalid', RETIRED_ENGINE_MESSAGE, { code: 'ENGINE_RETIRED', param });
}

export function createVoiceCatalog(deps: { engines: EngineInfo[]; voices: VoiceProfile[]; defaultVoiceId: string; clones: ClonesStore }): VoiceCatalog {
  const byId = new Map(deps.voices.map((v) => [v.id, v]));
  const byName = new Map(deps.voices.map((v) => [v.name.normalize('NFC').toLowerCase(), v]));
  const defaultEngine = deps.engines.find((e) => e.isDefault)?.key ?? deps.engines[0].key;

  const publicView = (v: VoiceProfile): PublicVoice => ({
    id: v.id, name: v.name, description: v.description, gender: v.gender, region: v.region, engine: v.engine, kind: v.kind,
  });

  function resolveEngine(value: string | null | undefined, param = 'engine'): string {
    if (value === undefined || value === null || value === '') return defaultEngine;
    if (RETIRED_ENGINES.has(value)) throw retiredEngineError(param);
    if (!deps.engines.some((e) => e.key === value)) {
      throw new DomainError('invalid', `Unknown engine "${value}". Available engines: ${deps.engines.map((e) => e.key).join(', ')}.`, { code: 'UNKNOWN_ENGINE', param });
    }
    return value;
  }

  async function resolveClone(id: string, input: ResolveVoiceInput): Promise<VoiceProfile> {
    if (!input.allowClones) {
      throw new DomainError('invalid', `Cloned voices cannot be used on this route; use POST /tts or POST /tts/stream for "${id}".`, { param: input.param });
    }
    const clone = await deps.clones.get(id);
    if (!clone || clone.accountId !== input.accountId) {
      throw new DomainError('invalid', `Voice "${id}" was not found among your voices.`, { param: input.param, code: 'VOICE_NOT_FOUND' });
    }
    if (RETIRED_ENGINES.has(clone.engine)) {
      throw new DomainError('invalid', `Voice "${id}" was enrolled on engine ${clone.engine}, which was retired on 2026-09-24; it cannot be rendered. Re-create the clone in the web studio.`, {
        code: 'CLONE_ENGINE_RETIRED', param: input.param, extra: { engine: clone.engine },
      });
    }
    if (!clone.referenceAvailable) {
      throw new DomainError('invalid', `Voice "${id}" is no longer available: its reference recording was removed.`, { param: input.param, code: 'CLONE_UNAVAILABLE' });
    }
    if (clone.engine !== input.engine) {
      throw new DomainError('invalid', `Voice "${id}" belongs to engine ${clone.engine}, not ${input.engine}.`, { param: input.param, code: 'VOICE_ENGINE_MISMATCH' });
    }
    const base = byId.get(clone.baseVoiceId) ?? byId.get(deps.defaultVoiceId)!;
    return { ...base, id: clone.id, name: clone.name, description: null, kind: 'cloned' };
  }

  return {
    engines: () => deps.engines,
    defaultEngine: () => defaultEngine,
    resolveEngine,
    publicView,
    async list({ engine, accountId }) {
      const key = resolveEngine(engine);
      const voices = deps.voices.filter((v) => v.engine === key).map(publicView);
      if (accountId) {
        for (const c of await deps.clones.listByAccount(accountId)) {
          if (c.engine === key) voices.push({ id: c.id, name: c.name, description: null, gender: null, region: null, engine: c.engine, kind: 'cloned' });
        }
      }
      return voices;
    },
    async resolve(input) {
      const wanted = input.voice?.trim();
      if (!wanted) {
        const def = byId.get(deps.defaultVoiceId);
        if (def && def.engine === input.engine) return def;
        const first = deps.voices.find((v) => v.engine === input.engine);
        if (!first) throw new DomainError('unavailable', `No voice is served for engine ${input.engine}.`);
        return first;
      }
      if (wanted.startsWith('clone_')) return resolveClone(wanted, input);
      const name = wanted.normalize('NFC').toLowerCase();
      const voice = byId.get(wanted) ?? byName.get(name);
      // SPEC Voice: a display name (a clone's too, as GET /voices of the engine lists it) stands in for the id; the catalogue's come first.
      if (!voice && input.accountId) {
        const clones = (await deps.clones.listByAccount(input.accountId))
          .filter((c) => c.engine === input.engine && c.name.normalize('NFC').toLowerCase() === name);
        if (clones.length === 1) return resolveClone(clones[0].id, input);
        if (clones.length > 1) {
          throw new DomainError('invalid', `Several of your voices are named "${wanted}" (${clones.map((c) => c.id).join(', ')}); pass the id.`, {
            param: input.param, code: 'VOICE_AMBIGUOUS',
          });
        }
      }
      if (!voice) {
        throw new DomainError('invalid', `Unknown voice "${wanted}". List voices with GET /voices?engine=${input.engine}.`, { param: input.param, code: 'VOICE_NOT_FOUND' });
      }
      if (voice.engine !== input.engine) {
        throw new DomainError('invalid', `Voice "${wanted}" belongs to engine ${voice.engine}, not ${input.engine}.`, { param: input.param, code: 'VOICE_ENGINE_MISMATCH' });
      }
      return voice;
    },
  };
}
