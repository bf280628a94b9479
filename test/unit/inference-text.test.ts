import test from 'ava';
import { normalizeText, prepareText } from '../../core/speechkit/text/prepare.ts';
import { readCardinal } from '../../core/speechkit/text/numbers.ts';
import { splitChunks } from '../../core/speechkit/text/split.ts';
import { segmentCues } from '../../core/speechkit/text/cues.ts';
import { EmbeddedRefiner, ModerationRefusal } from '../../core/speechkit/text/refiner.ts';
import { refineForRequest } from '../../core/speechkit/text/refine.ts';
import { DomainError } from '../../core/errors.ts';
import { toApiError } from '../../core/http/envelopes.ts';

type Case = [rule: string, input: string, expected: string];

const CARDINALS: Array<[string, string]> = [
  ['0', 'không'],
  ['5', 'năm'],
  ['10', 'mười'],
  ['11', 'mười một'],
  ['15', 'mười lăm'],
  ['20', 'hai mươi'],
  ['21', 'hai mươi mốt'],
  ['24', 'hai mươi tư'],
  ['25', 'hai mươi lăm'],
  ['55', 'năm mươi lăm'],
  ['100', 'một trăm'],
  ['101', 'một trăm linh một'],
  ['105', 'một trăm linh năm'],
  ['110', 'một trăm mười'],
  ['115', 'một trăm mười lăm'],
  ['121', 'một trăm hai mươi mốt'],
  ['1000', 'một nghìn'],
  ['1005', 'một nghìn không trăm linh năm'],
  ['1050', 'một nghìn không trăm năm mươi'],
  ['2024', 'hai nghìn không trăm hai mươi tư'],
  ['15000', 'mười lăm nghìn'],
  ['1000000', 'một triệu'],
  ['1000005', 'một triệu không trăm linh năm'],
  ['2001000', 'hai triệu không trăm linh một nghìn'],
  ['1000000000', 'một tỷ'],
  ['1500000000', 'một tỷ năm trăm triệu'],
  ['1000000000005', 'một nghìn tỷ không trăm linh năm'],
  ['007', 'bảy'],
];

for (const [digits, words] of CARDINALS) {
  test(`cardinal reading ("mốt/lăm/linh/mươi" rules): ${digits} → ${words}`, (t) => {
    t.is(readCardinal(digits), words);
  });
}

const NORMALISATION: Case[] = [
  // numbers written in text
  ['thousands are written with dots', 'Có 1.000.000 người', 'Có một triệu người'],
  ['a decimal comma is read "phẩy"', '3,5 lít nước', 'ba phẩy năm lít nước'],
  ['leading zeros after the comma are read one by one', 'hệ số 0,05', 'hệ số không phẩy không năm'],
  ['a short fraction part is read as a number', 'số pi là 3,14', 'số pi là ba phẩy mười bốn'],
  ['English thousands commas with several groups', 'giá 1,000,000', 'giá một triệu'],
  ['thousands dots and a decimal comma together', '10.000,5 tấn', 'mười nghìn phẩy năm tấn'],
  ['an English decimal point is read "phẩy"', 'phiên bản 1.5', 'phiên bản một phẩy năm'],
  ['an integer with a leading zero is a code read digit by digit', 'Mã 007', 'Mã không không bảy'],
  ['more than 15 digits are read digit by digit', 'thẻ 1234567890123456', 'thẻ một hai ba bốn năm sáu bảy tám chín không một hai ba bốn năm sáu'],
  ['a number at a sentence end keeps the full stop', 'Năm 2026.', 'Năm hai nghìn không trăm hai mươi sáu.'],
  // dates
  ['a full date d/m/yyyy gains "ngày"', 'Hẹn 21/11/2026 nhé', 'Hẹn ngày hai mươi mốt tháng mười một năm hai nghìn không trăm hai mươi sáu nhé'],
  ['a full date after "ngày" does not repeat it', 'ngày 01/01/2000', 'ngày một tháng một năm hai nghìn'],
  ['a full date with dashes', '21-11-2026', 'ngày hai mươi mốt tháng mười một năm hai nghìn không trăm hai mươi sáu'],
  ['a full date with dots', '21.11.2026', 'ngày hai mươi mốt tháng mười một năm hai nghìn không trăm hai mươi sáu'],
  ['day/month after "ngày"', 'ngày 5/3', 'ngày năm tháng ba'],
  ['day/month after a time of day gains "ngày"', 'Sáng 5/3, trời mưa', 'Sáng ngày năm tháng ba, trời mưa'],
  ['month 4 is "tư" in dates', 'ngày 30/4', 'ngày ba mươi tháng tư'],
  ['month/year after "tháng"', 'tháng 4/2026', 'tháng tư năm hai nghìn không trăm hai mươi sáu'],
  ['month/year alone gains "tháng"', 'Từ 11/2026', 'Từ tháng mười một năm hai nghìn không trăm hai mươi sáu'],
  ['"tháng 4" alone is "tháng tư"', 'đầu tháng 4', 'đầu tháng tư'],
  ['an impossible month is not read as a date', 'ngày 5/13', 'ngày năm phần mười ba'],
  // times
  ['hh:mm is "giờ ... phút"', 'Lúc 14:30', 'Lúc mười bốn giờ ba mươi phút'],
  ['hh:00 is just "giờ"', 'Lúc 14:00', 'Lúc mười bốn giờ'],
  ['minutes with a leading zero', '08:05 sáng', 'tám giờ năm phút sáng'],
  ['hh:mm:ss adds "giây"', '10:20:30', 'mười giờ hai mươi phút ba mươi giây'],
  ['"8h30" is "tám giờ ba mươi"', 'Họp lúc 8h30', 'Họp lúc tám giờ ba mươi'],
  ['"8h" is "tám giờ"', 'Họp lúc 8h', 'Họp lúc tám giờ'],
  ['"8h30p" names the minutes', '8h30p', 'tám giờ ba mươi phút'],
  // currencies
  ['"$5" is "năm đô la"', 'Giá $5', 'Giá năm đô la'],
  ['"$" after the amount', 'Giá 5$', 'Giá năm đô la'],
  ['"đ" after thousands', 'Giá 50.000đ', 'Giá năm mươi nghìn đồng'],
  ['"đ" after a space', 'Giá 50.000 đ', 'Giá năm mươi nghìn đồng'],
  ['"VND" is "đồng"', '20.000 VND', 'hai mươi nghìn đồng'],
  ['"VNĐ" is "đồng"', '20.000 VNĐ', 'hai mươi nghìn đồng'],
  ['"USD" is "đô la Mỹ"', '10 USD', 'mười đô la Mỹ'],
  ['"€" before the amount', '€20', 'hai mươi ơ rô'],
  ['a dollar amount with a scale word', '$3 triệu', 'ba triệu đô la'],
  ['"2tr VND" with an informal scale', '2tr VND', 'hai triệu đồng'],
  ['"50k" is "năm mươi nghìn"', 'Giá 50k', 'Giá năm mươi nghìn'],
  ['"20tr" is "hai mươi triệu"', 'lương 20tr', 'lương hai mươi triệu'],
  ['a written "triệu đồng" is left as words', '2 triệu đồng', 'hai triệu đồng'],
  // percentages
  ['"15%" is "mười lăm phần trăm"', 'tăng 15%', 'tăng mười lăm phần trăm'],
  ['a decimal percentage', 'lãi 3,5%', 'lãi ba phẩy năm phần trăm'],
  ['a negative percentage', 'giảm -2%', 'giảm âm hai phần trăm'],
  ['a space before the percent sign', '100 %', 'một trăm phần trăm'],
  // phone numbers
  ['a mobile number is read digit by digit', 'Gọi 0912345678', 'Gọi không chín một hai ba bốn năm sáu bảy tám'],
  ['a mobile number in groups with spaces', '0912 345 678', 'không chín một hai ba bốn năm sáu bảy tám'],
  ['a mobile number in groups with dots', '0912.345.678', 'không chín một hai ba bốn năm sáu bảy tám'],
  ['"+84" is "cộng tám bốn"', '+84 912 345 678', 'cộng tám bốn chín một hai ba bốn năm sáu bảy tám'],
  ['a landline with an area code', '028 3812 3456', 'không hai tám ba tám một hai ba bốn năm sáu'],
  // units
  ['"km" after a number', 'đi 5km', 'đi năm ki lô mét'],
  ['"kg" after a decimal', '3,5 kg', 'ba phẩy năm ki lô gam'],
  ['"km/h" beats "km"', '60 km/h', 'sáu mươi ki lô mét trên giờ'],
  ['"m2" is "mét vuông"', '100m2', 'một trăm mét vuông'],
  ['"m²" is "mét vuông"', '80 m²', 'tám mươi mét vuông'],
  ['"°C" is "độ xê"', '25°C', 'hai mươi lăm độ xê'],
  ['a negative temperature', 'Nhiệt độ -5°C', 'Nhiệt độ âm năm độ xê'],
  ['"ml" is "mi li lít"', '500ml', 'năm trăm mi li lít'],
  ['"cm" is "xen ti mét"', '10 cm', 'mười xen ti mét'],
  ['"ha" is "héc ta"', '3 ha', 'ba héc ta'],
  ['"GB" is "gi ga bai"', '2GB', 'hai gi ga bai'],
  ['a unit letter inside a word is not a unit', '5 mét', 'năm mét'],
  ['a unit is only read after a number', 'km là đơn vị', 'km là đơn vị'],
  // abbreviations
  ['"TP.HCM" is "thành phố Hồ Chí Minh"', 'Tại TP.HCM', 'Tại thành phố Hồ Chí Minh'],
  ['"TP. HCM" with a space', 'TP. HCM', 'thành phố Hồ Chí Minh'],
  ['"TPHCM" without dots', 'TPHCM', 'thành phố Hồ Chí Minh'],
  ['"UBND" is "ủy ban nhân dân"', 'UBND phường', 'ủy ban nhân dân phường'],
  ['"HĐND" is "hội đồng nhân dân"', 'HĐND tỉnh', 'hội đồng nhân dân tỉnh'],
  ['"HN" is "Hà Nội"', 'Về HN', 'Về Hà Nội'],
  ['"VN" is "Việt Nam"', 'Đội tuyển VN', 'Đội tuyển Việt Nam'],
  ['"THPT" is "trung học phổ thông"', 'Trường THPT', 'Trường trung học phổ thông'],
  ['"GS.TS" is "giáo sư tiến sĩ"', 'GS.TS Nguyễn Văn A', 'giáo sư tiến sĩ Nguyễn Văn A'],
  ['"v.v." is "vân vân"', 'táo, cam, v.v.', 'táo, cam, vân vân'],
  ['"Q.1" is "quận một"', 'Q.1', 'quận một'],
  ['"GD&ĐT" is "giáo dục và đào tạo"', 'Bộ GD&ĐT', 'Bộ giáo dục và đào tạo'],
  ['abbreviations match whole tokens only', 'HNX và VNM', 'HNX và VNM'],
  // ordinals, Roman numerals
  ['"thứ 2" is "thứ hai"', 'thứ 2', 'thứ hai'],
  ['"thứ 4" is "thứ tư"', 'Thứ 4 tuần sau', 'Thứ tư tuần sau'],
  ['"thứ 1" is "thứ nhất"', 'giải thứ 1', 'giải thứ nhất'],
  ['Roman numerals after "thế kỷ"', 'thế kỷ XXI', 'thế kỷ hai mươi mốt'],
  ['Roman numerals after "Đại hội"', 'Đại hội XIII', 'Đại hội mười ba'],
  ['a capital word that is not a Roman numeral stays', 'thế kỷ ABC', 'thế kỷ ABC'],
  // ranges, negatives, fractions
  ['"5-10" is "năm đến mười"', '5-10 người', 'năm đến mười người'],
  ['a range with a unit', '5-10km', 'năm đến mười ki lô mét'],
  ['a leading minus is "âm"', 'giá trị -5', 'giá trị âm năm'],
  ['"1/2" is "một phần hai"', '1/2 cái bánh', 'một phần hai cái bánh'],
  ['"24/7" is "hai mươi tư trên bảy"', 'mở cửa 24/7', 'mở cửa hai mươi tư trên bảy'],
  ['a name-number hyphen is not read', 'COVID-19', 'COVID mười chín'],
  // English is left to espeak
  ['English words are left untouched', 'Hello world, I love Vietnam', 'Hello world, I love Vietnam'],
  ['mixed English brand names are left untouched', 'Dùng Google Meet và iPhone', 'Dùng Google Meet và iPhone'],
  // cue tags
  ['cue tag [cười] is kept', 'Xin chào [cười] bạn', 'Xin chào [cười] bạn'],
  ['cue tag [thở dài] is kept', '[thở dài] Mệt quá', '[thở dài] Mệt quá'],
  ['cue tag [hắng giọng] is kept', 'E hèm [hắng giọng].', 'E hèm [hắng giọng].'],
  ['cue tags are matched case- and space-insensitively', '[Cười] rồi [ thở  dài ]', '[cười] rồi [thở dài]'],
  ['every other bracket tag is deleted', 'Vui [happy] quá [laugh].', 'Vui quá.'],
  ['an empty bracket tag is deleted', 'A [] B', 'A B'],
  ['a deleted tag leaves no space before punctuation', 'Xong [pause].', 'Xong.'],
  // symbols and whitespace
  ['"&" is "và"', 'Tom & Jerry', 'Tom và Jerry'],
  ['markdown emphasis is not read', '**Quan trọng**', 'Quan trọng'],
  ['runs of spaces collapse', 'a   b\t c', 'a b c'],
  ['blank lines collapse to one newline', 'Dòng một\n\n\nDòng hai', 'Dòng một\nDòng hai'],
  ['text is NFC-normalised', 'Tie\u0302\u0301ng Vie\u0323\u0302t', 'Tiếng Việt'],
];

for (const [rule, input, expected] of NORMALISATION) {
  test(`text preparation: ${rule}: ${JSON.stringify(input)} → ${JSON.stringify(expected)}`, (t) => {
    t.is(normalizeText(input), expected);
  });
}

const SPLITS: Array<[string, string, string[]]> = [
  ['split on . ! ?', 'Một. Hai! Ba?', ['Một.', 'Hai!', 'Ba?']],
  ['split on … ; :', 'Một… Hai; Ba: Bốn', ['Một…', 'Hai;', 'Ba:', 'Bốn']],
  ['split on newlines', 'Dòng một\nDòng hai', ['Dòng một', 'Dòng hai']],
  ['a full stop inside a token does not split', 'Xem example.com ngay.', ['Xem example.com ngay.']],
  ['titles such as "Mr." do not end a sentence', 'Mr. Smith đến.', ['Mr. Smith đến.']],
  ['closing quotes stay with their sentence', 'Anh nói "Chào." Rồi đi.', ['Anh nói "Chào."', 'Rồi đi.']],
  ['cue tags are chunks of their own', 'Chào [cười] bạn.', ['Chào', '[cười]', 'bạn.']],
  ['chunks with nothing speakable are dropped', '... !!! Chào.', ['Chào.']],
  ['empty text gives no chunks', '   ', []],
];

for (const [rule, input, expected] of SPLITS) {
  test(`sentence splitting: ${rule}`, (t) => {
    t.deepEqual(splitChunks(input), expected);
  });
}

test('sentence splitting: a long sentence is cut at commas into clauses under the clause length', (t) => {
  const sentence = Array.from({ length: 8 }, (_, i) => `đây là mệnh đề số ${i} khá dài một chút`).join(', ') + '.';
  const chunks = splitChunks(sentence, { clauseChars: 80 });
  t.true(chunks.length > 1);
  for (const c of chunks) t.true(c.length <= 80, c);
  t.is(chunks.join(' '), sentence);
});

test('sentence splitting: chunks stay under the max length, split at spaces; one huge word is cut hard', (t) => {
  const words = Array.from({ length: 200 }, (_, i) => `từ${i}`).join(' ');
  const chunks = splitChunks(`${words} ${'x'.repeat(600)}`, { maxChars: 250 });
  for (const c of chunks) {
    t.true(c.length > 0 && c.length <= 250);
  }
  t.deepEqual(chunks.slice(-3).map((c) => c.length), [250, 250, 100]);
  t.is(chunks.join('').replace(/ /g, ''), `${words}${'x'.repeat(600)}`.replace(/ /g, ''), 'no character is lost');
});

test('prepareText returns the normalised text and its chunks', (t) => {
  const out = prepareText('Ngày 21/11/2026 tại TP.HCM. Giá $5 [cười] [music]!');
  t.is(out.text, 'Ngày hai mươi mốt tháng mười một năm hai nghìn không trăm hai mươi sáu tại thành phố Hồ Chí Minh. Giá năm đô la [cười]!');
  t.deepEqual(out.chunks, [
    'Ngày hai mươi mốt tháng mười một năm hai nghìn không trăm hai mươi sáu tại thành phố Hồ Chí Minh.',
    'Giá năm đô la',
    '[cười]',
  ]);
});

test('segmentCues alternates text and cue segments in order', (t) => {
  t.deepEqual(segmentCues('A [cười] B [hắng giọng]'), [
    { kind: 'text', text: 'A' }, { kind: 'cue', cue: 'cười' }, { kind: 'text', text: 'B' }, { kind: 'cue', cue: 'hắng giọng' },
  ]);
});

const refiner = new EmbeddedRefiner({ moderationTerms: ['ma túy', 'bom', 'cờ bạc online'] });

const REFUSED: Array<[string, string]> = [
  ['a listed term is refused', 'Buôn ma túy là tội'],
  ['matching ignores case', 'BOM nổ'],
  ['matching ignores diacritics', 'ma tuy đá'],
  ['matching ignores diacritics the other way', 'bỏm bom'],
  ['multi-word terms match across any spacing', 'chơi cờ   bạc online'],
];
for (const [rule, input] of REFUSED) {
  test(`aiRefine moderation: ${rule}: ${JSON.stringify(input)}`, async (t) => {
    const err = await t.throwsAsync(refiner.refine(input), { instanceOf: ModerationRefusal });
    t.true(err!.terms.length > 0);
  });
}

const PASSED: Array<[string, string]> = [
  ['a term inside a longer word does not match', 'Phim bomb tấn'],
  ['a longer word that starts like a term does not match', 'con ma tuýt'],
];
for (const [rule, input] of PASSED) {
  test(`aiRefine moderation: ${rule}: ${JSON.stringify(input)}`, async (t) => {
    await t.notThrowsAsync(refiner.refine(input));
  });
}

const REFINED: Case[] = [
  ['"AI" is spelled "ây ai"', 'AI thay đổi thế giới', 'ây ai thay đổi thế giới'],
  ['acronyms are spelled with Vietnamese letter names', 'GDP tăng', 'gờ đê pê tăng'],
  ['"VTV" is "vê tê vê"', 'Kênh VTV', 'Kênh vê tê vê'],
  ['abbreviations that preparation expands are left for it', 'UBND họp', 'UBND họp'],
  ['Roman numerals are left for preparation', 'thế kỷ XXI', 'thế kỷ XXI'],
  ['a shouted heading is not spelled', 'XIN CHÀO CÁC BẠN', 'XIN CHÀO CÁC BẠN'],
  ['"a+b=c" is read as a formula', 'a+b=c', 'a cộng bê bằng xê'],
  ['"x^2" is "ích bình phương"', 'x^2', 'ích bình phương'],
  ['"x^n" is "mũ"', 'x^n', 'ích mũ nờ'],
  ['"E=mc^2" reads variables letter by letter', 'E=mc^2', 'e bằng mờ xê bình phương'],
  ['coefficients keep their digits for preparation', '2x + 3 = 7', '2 ích cộng 3 bằng 7'],
  ['comparison operators', 'x >= y', 'ích lớn hơn hoặc bằng i'],
  ['a hyphen alone is not a formula', 'Wi-Fi và a-b', 'oai phai và a-b'],
  ['mixed English: "email" is respelled', 'Gửi email cho tôi', 'Gửi i meo cho tôi'],
  ['mixed English: "Facebook" is respelled', 'Vào Facebook', 'Vào phây búc'],
];
for (const [rule, input, expected] of REFINED) {
  test(`aiRefine pronunciation: ${rule}: ${JSON.stringify(input)} → ${JSON.stringify(expected)}`, async (t) => {
    t.is((await refiner.refine(input)).text, expected);
  });
}

test('aiRefine then preparation: "x^2 = 4" ends fully spoken', async (t) => {
  t.is(normalizeText((await refiner.refine('x^2 = 4')).text), 'ích bình phương bằng bốn');
});

test('refineForRequest turns a moderation refusal into the unprocessable refusal (422)', (t) => {
  const err = t.throws(() => refineForRequest('ma túy', ['ma túy']), { instanceOf: DomainError });
  t.is(err!.kind, 'unprocessable');
  t.is(toApiError(err).status, 422);
  t.is(refineForRequest('Xin chào AI', ['ma túy']).text, 'Xin chào ây ai');
});
