/**
 * The cheap checks every synthesis route runs before any expensive work
 * (text preparation, the engine): the test-key word cap and whether some
 * grant of the caller can pay the price at all, read without charging. A key
 * whose grants cannot pay is refused here and costs the server a few reads.
 * Text length and combining-mark runs are checked earlier, by the schema.
 */
import type { BillingService, PayerGrants } from '../billing/service.ts';
import { enforceTestKeyWordCap } from '../speechkit/text/word-cap.ts';
import type { AuthContext } from './auth.ts';

export interface SynthesisPrice {
  /** NFC characters, as billed */
  characters: number;
  tokens: number;
  /** the grants the check read: pass them to `charge` to spare it a read */
  grants?: PayerGrants;
}

export async function preflightSynthesis(
  billing: BillingService,
  auth: AuthContext,
  input: { text: string; engine: string; aiRefine: boolean; param: string },
): Promise<SynthesisPrice> {
  enforceTestKeyWordCap(auth, input.text, input.param);
  const price = billing.price({ text: input.text, engine: input.engine, aiRefine: input.aiRefine });
  const grants = await billing.assess({ payer: { accountId: auth.accountId, keyId: auth.keyId, grantId: auth.grantId }, engine: input.engine, tokens: price.tokens });
  return { ...price, grants };
}
