
/** A catalogue voice and how the engine renders it. */
export interface VoiceProfile {
  /** catalogue id, e.g. `vi-north-female-mai` */
  id: string;
  name: string;
  description: string | null;
  gender: 'female' | 'male' | null;
  region: 'north' | 'central' | 'south' | null;
  engine: string;
  kind: 'catalog' | 'cloned';
  /** engine-specific rendering parameters (espeak voice, pitch; onnx model dir, speaker id) */
  render: VoiceRender;
}

export type VoiceRender =
  | { backend: 'espeak'; espeakVoice: string; variant?: string; pitch?: number; wordsPerMinute?: number }
  | { backend: 'onnx'; modelDir: string; speakerId?: number };

/**
 * The catalogue served by the embedded espeak-ng engine: Northern, Central
 * and Southern Vietnamese, female and male. A voice can be pointed at an ONNX
 * voice directory through `VOICE_MODELS` (see config/schema.ts).
 */
export const DEFAULT_VOICE_ID = 'vi-north-female-mai';

export const CATALOGUE: VoiceProfile[] = [
  {
    id: 'vi-north-female-mai', name: 'Mai', gender: 'female', region: 'north', engine: 'v4', kind: 'catalog',
    description: 'Giọng nữ miền Bắc, trong và rõ ràng, hợp đọc tin tức',
    render: { backend: 'espeak', espeakVoice: 'vi', variant: 'f3', pitch: 55 },
  },
  {
    id: 'vi-north-male-minh', name: 'Minh', gender: 'male', region: 'north', engine: 'v4', kind: 'catalog',
    description: 'Giọng nam miền Bắc, trầm ấm, hợp đọc sách',
    render: { backend: 'espeak', espeakVoice: 'vi', variant: 'm3', pitch: 45 },
  },
  {
    id: 'vi-central-female-huong', name: 'Hương', gender: 'female', region: 'central', engine: 'v4', kind: 'catalog',
    description: 'Giọng nữ miền Trung, nhẹ nhàng',
    render: { backend: 'espeak', espeakVoice: 'vi-vn-x-central', variant: 'f2', pitch: 55 },
  },
  {
    id: 'vi-central-male-hung', name: 'Hùng', gender: 'male', region: 'central', engine: 'v4', kind: 'catalog',
    description: 'Giọng nam miền Trung, chắc khỏe',
    render: { backend: 'espeak', espeakVoice: 'vi-vn-x-central', variant: 'm1', pitch: 45 },
  },
  {
    id: 'vi-south-female-lan', name: 'Lan', gender: 'female', region: 'south', engine: 'v4', kind: 'catalog',
    description: 'Giọng nữ miền Nam, tươi sáng, hợp trợ lý ảo',
    render: { backend: 'espeak', espeakVoice: 'vi-vn-x-south', variant: 'f4', pitch: 55 },
  },
  {
    id: 'vi-south-male-nam', name: 'Nam', gender: 'male', region: 'south', engine: 'v4', kind: 'catalog',
    description: 'Giọng nam miền Nam, thân thiện',
    render: { backend: 'espeak', espeakVoice: 'vi-vn-x-south', variant: 'm2', pitch: 45 },
  },
];
