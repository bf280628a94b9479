import { startTestPlatform, type TestPlatform } from './platform.ts';

/** The plugins the speech tests need (the jobs plugin answers GET /tts/<id> for saved copies). */
export const SPEECH_PLUGINS = 'catalog,account,closed,speech,jobs,usage';

export function startSpeechPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  return startTestPlatform({ PLUGINS: SPEECH_PLUGINS, ...env });
}

/** A sentence of about 200 characters, numbers and an English word included. */
export const SENTENCE =
  'Hôm nay, ngày 15/3/2026, Hà Nội có mưa nhẹ vào buổi sáng. Nhiệt độ từ 18 đến 24 độ C. Người dân nên mang theo áo mưa khi ra đường, và nhớ kiểm tra email trước khi đi làm nhé.';

/** Tokens a text costs at the default multipliers (v4 x3, global x1.3, at least 50 characters). */
export function priceOf(text: string, multiplier = 3 * 1.3): number {
  const characters = Math.max(50, [...text.normalize('NFC')].length);
  return Math.ceil(Math.round(characters * multiplier * 1e6) / 1e6);
}

export async function remainingTokens(p: TestPlatform, apiKey: string): Promise<number> {
  const res = await p.api('/balance', { key: apiKey });
  return ((await res.json()) as { remaining: number }).remaining;
}

/** Many sentences: long enough that a stream stays open for a while. */
export function longText(sentences: number): string {
  return Array.from({ length: sentences }, (_, i) => `Đây là câu thứ ${i + 1} của một văn bản dài, được đọc chậm rãi và rõ ràng.`).join(' ');
}
