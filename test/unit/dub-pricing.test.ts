import test from 'ava';
import { dubPriceTokens } from '../../plugins/dub/pricing.ts';

test('dub: 65 tokens per second, floor 150, times the engine multiplier (no global multiplier)', (t) => {
  t.is(dubPriceTokens(1, 3), 450, '65 x 1 is under the floor: 150 x 3');
  t.is(dubPriceTokens(10, 3), 1950);
  t.is(dubPriceTokens(2.5, 3), 488, 'rounded up to a whole token');
  t.is(dubPriceTokens(3, 1), 195);
  t.is(dubPriceTokens(4.6, 3), 897);
  t.is(dubPriceTokens(3.3, 3), 644);
});
