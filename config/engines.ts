/** Engines served. `v3` was retired on 2026-09-24 and is only named to refuse it. */
export interface EngineInfo {
  key: string;
  label: string;
  isDefault: boolean;
  sampleRate: number;
  billingMultiplier: number;
  features: string[];
}

export const RETIRED_ENGINES = new Set(['v3']);

export function defaultEngines(v4Multiplier: number): EngineInfo[] {
  return [
    {
      key: 'v4',
      label: 'VieNeu v4',
      isDefault: true,
      sampleRate: 48000,
      billingMultiplier: v4Multiplier,
      features: ['generate', 'clone', 'dialogue', 'stream', 'dub', 'srt'],
    },
  ];
}
