import test from 'ava';
import { normalizeText } from '../../core/speechkit/text/prepare.ts';
import { refineText } from '../../core/speechkit/text/refiner.ts';
import { ModerationList } from '../../core/speechkit/text/moderation.ts';

type Case = [rule: string, input: string, expected: string];

// Each rule with rows that prove the new reading and rows that prove nearby ordinary text is unchanged.
const READINGS: Case[] = [
  // day/month dates without "ngày"
  ['d/m after "từ" and "đến" is a date', 'từ 12/3 đến 15/3', 'từ ngày mười hai tháng ba đến mười lăm tháng ba'],
  ['d/m after "dịp" is a date', 'dịp 30/4', 'dịp ba mươi tháng tư'],
  ['d/m after "hôm nay" is a date', 'hôm nay 2/9', 'hôm nay ngày hai tháng chín'],
  ['d/m after "hôm" names the day itself ("hôm 12/3", not "hôm ngày")', 'hôm 12/3', 'hôm mười hai tháng ba'],
  ['d/m after a holiday name is a date', 'Ngày Nhà giáo 20/11', 'Ngày Nhà giáo hai mươi tháng mười một'],
  ['a list of d/m after a date are all dates', 'ngày 12/3, 13/3 và 14/3', 'ngày mười hai tháng ba, mười ba tháng ba và mười bốn tháng ba'],
  ['date words are matched case-insensitively', 'NGÀY 12/3', 'NGÀY mười hai tháng ba'],
  ['d/m after "tết" is a date', 'tết 1/1', 'tết một tháng một'],
  ['a date range after "từ" starting with a small day', 'từ 1/3 đến 15/3', 'từ ngày một tháng ba đến mười lăm tháng ba'],
  ['a fraction without a date word stays a fraction', '1/2 dân số', 'một phần hai dân số'],
  ['a fraction after "đến" stays a fraction', 'chiếm đến 3/4 số phiếu', 'chiếm đến ba phần tư số phiếu'],
  ['fractions after "từ" stay fractions', 'giảm từ 1/2 xuống 1/3', 'giảm từ một phần hai xuống một phần ba'],
  ['a fraction after a date and a comma stays a fraction', 'ngày 5/3, 1/2 dân số', 'ngày năm tháng ba, một phần hai dân số'],
  ['"24/7" stays "trên"', 'mở cửa 24/7', 'mở cửa hai mươi tư trên bảy'],
  ['an impossible month after a date word is not a date', 'ngày 5/13', 'ngày năm phần mười ba'],
  // dash dates and ISO dates
  ['d-m after "ngày" is a date', 'ngày 1-5', 'ngày một tháng năm'],
  ['a list of d-m after "ngày"', 'ngày 30-4 và 2-9', 'ngày ba mươi tháng tư và hai tháng chín'],
  ['an ISO date is one date', '2024-03-12', 'ngày mười hai tháng ba năm hai nghìn không trăm hai mươi tư'],
  ['an ISO date after "ngày" does not repeat it', 'ngày 2024-03-12', 'ngày mười hai tháng ba năm hai nghìn không trăm hai mươi tư'],
  ['d-m before "tháng" is a range of days', 'ngày 1-5 tháng 3', 'ngày một đến năm tháng ba'],
  ['a dash without a date word is a range', '5-10 người', 'năm đến mười người'],
  ['a dash after a time of day is a range', 'sáng 8-10 giờ', 'sáng tám đến mười giờ'],
  // scores
  ['a score after "thắng"', 'thắng 2-1', 'thắng hai – một'],
  ['a score after "hòa"', 'hòa 1-1', 'hòa một – một'],
  ['a score after "thua"', 'thua 0-3', 'thua không – ba'],
  ['a score after "tỷ số"', 'tỷ số 2-1', 'tỷ số hai – một'],
  ['a score after a team name', 'thắng Thái Lan 3-0', 'thắng Thái Lan ba – không'],
  ['a count of matches is a range', 'thắng 5-10 trận', 'thắng năm đến mười trận'],
  // ratios
  ['a ratio after "tỷ lệ"', 'tỷ lệ 1:10', 'tỷ lệ một trên mười'],
  ['a ratio after "pha" with what it mixes with', 'pha 1:3 với nước', 'pha một trên ba với nước'],
  ['a colon before a grouped number is a ratio, not a time', 'bản đồ 1:50.000', 'bản đồ một trên năm mươi nghìn'],
  ['a clock time stays a time', 'Lúc 14:30', 'Lúc mười bốn giờ ba mươi phút'],
  // Roman numerals
  ['a lone C after "Phần" is a letter', 'Phần C: Tự luận', 'Phần C: Tự luận'],
  ['a lone I after "Phần" is a numeral', 'Phần I: Trắc nghiệm', 'Phần một: Trắc nghiệm'],
  ['"thành phần X" is not a numeral', 'thành phần X', 'thành phần X'],
  ['Roman numeral after "Quý" with a year', 'Quý III/2024', 'Quý ba năm hai nghìn không trăm hai mươi tư'],
  ['Roman numeral after "lần thứ"', 'lần thứ XIII', 'lần thứ mười ba'],
  ['Roman numeral after "thứ" is an ordinal', 'Thế chiến thứ IV', 'Thế chiến thứ tư'],
  ['a lone I after "thứ" is not read', 'thứ I', 'thứ I'],
  ['Roman numeral after "cấp"', 'cấp II', 'cấp hai'],
  ['Roman numeral after "giai đoạn"', 'giai đoạn III', 'giai đoạn ba'],
  ['context words are matched case-insensitively', 'Thế Kỷ XX', 'Thế Kỷ hai mươi'],
  ['context words in capitals', 'THẾ KỶ XXI', 'THẾ KỶ hai mươi mốt'],
  ['a name initial is not a numeral', 'Lê Văn C', 'Lê Văn C'],
  // ordinals
  ['an ordinal does not cut a grouped number', 'vị khách thứ 1.000', 'vị khách thứ một nghìn'],
  ['"thứ 2" is still "thứ hai"', 'thứ 2', 'thứ hai'],
  ['"THỨ 4" in capitals is a day', 'THỨ 4', 'THỨ tư'],
  ['a range of weekdays names both days', 'Thứ 2-6', 'Thứ hai đến thứ sáu'],
  ['every day of a list of weekdays is a day', 'học thứ 2, 4, 6 hàng tuần', 'học thứ hai, tư, sáu hàng tuần'],
  ['weekdays joined by "và" at the end', 'thứ 3 và 4.', 'thứ ba và tư.'],
  ['a count after a weekday is not a day', 'vào thứ 4, 4 người đến', 'vào thứ tư, bốn người đến'],
  // leading zeros next to date and time words
  ['leading zeros in a written-out date', 'ngày 05 tháng 03 năm 2024', 'ngày năm tháng ba năm hai nghìn không trăm hai mươi tư'],
  ['leading zero before "giờ"', 'lúc 07 giờ 30 phút', 'lúc bảy giờ ba mươi phút'],
  ['leading zero before "phút"', '7 giờ 05 phút', 'bảy giờ năm phút'],
  ['a numbered document stays a code before "ngày"', 'Quyết định số 05 ngày 12/3/2024', 'Quyết định số không năm ngày mười hai tháng ba năm hai nghìn không trăm hai mươi tư'],
  ['a code with a leading zero is still read digit by digit', 'Mã 007', 'Mã không không bảy'],
  ['a leading zero elsewhere is still read digit by digit', 'số 05', 'số không năm'],
  // time ranges
  ['"8h-17h" keeps "đến"', '8h-17h', 'tám giờ đến mười bảy giờ'],
  ['"8:00-17:00" keeps "đến"', '8:00-17:00', 'tám giờ đến mười bảy giờ'],
  ['a spaced clock range keeps "đến"', '19:30 - 21:00', 'mười chín giờ ba mươi phút đến hai mươi mốt giờ'],
  // signs
  ['an en dash before a number is a minus', '–5°C', 'âm năm độ xê'],
  ['"≥" is "lớn hơn hoặc bằng"', 'x ≥ 5', 'x lớn hơn hoặc bằng năm'],
  ['"≤" is "nhỏ hơn hoặc bằng"', 'x ≤ 5', 'x nhỏ hơn hoặc bằng năm'],
  ['"±" is "cộng trừ"', '±2', 'cộng trừ hai'],
  ['"≈" is "xấp xỉ"', '≈ 3', 'xấp xỉ ba'],
  ['"~" before a number is "khoảng"', '~50', 'khoảng năm mươi'],
  ['markdown strike-through "~~" is not read', '~~gạch~~', 'gạch'],
  ['"×" between numbers is "nhân"', '2 × 3', 'hai nhân ba'],
  ['"+" and "=" between numbers are "cộng" and "bằng"', '2+3 = 5', 'hai cộng ba bằng năm'],
  ['"+" after a number is "cộng"', 'phim 18+.', 'phim mười tám cộng.'],
  ['"C++" and a phone number\'s "+" are not arithmetic', 'C++ và +84 912 345 678', 'C++ và cộng tám bốn chín một hai ba bốn năm sáu bảy tám'],
  ['"=" between words is not read', 'a=b', 'a=b'],
  ['"4K" and "8K" are resolutions', 'màn hình 4K, video 8K', 'màn hình bốn ca, video tám ca'],
  ['"50K" is still an amount', 'giá 50K', 'giá năm mươi nghìn'],
  ['"×" between letters is left', 'a × b', 'a × b'],
  ['"÷" is "chia"', '6 ÷ 2', 'sáu chia hai'],
  ['an en dash between words is not a minus', 'Hà Nội – Huế', 'Hà Nội – Huế'],
  // fractions
  ['a denominator 4 is "phần tư"', '3/4', 'ba phần tư'],
  ['an improper fraction over 4 stays "trên bốn"', '5/4 cái', 'năm trên bốn cái'],
  // zero-width characters
  ['a zero-width space inside a number is dropped', '10\u200b000', 'mười nghìn'],
  ['a BOM and word joiner are dropped', '\ufeffgiá 5\u20600', 'giá năm mươi'],
  // decades
  ['"1990s" is a decade', '1990s', 'những năm một nghìn chín trăm chín mươi'],
  ['seconds with a space stay seconds', '1990 s', 'một nghìn chín trăm chín mươi giây'],
  ['seconds that are not a decade stay seconds', '30s', 'ba mươi giây'],
  // digits glued to letters
  ['"U23" is set apart', 'U23', 'U hai mươi ba'],
  ['"H5N1" is set apart', 'H5N1', 'H năm N một'],
  ['a height "1m75"', 'cao 1m75', 'cao một mét bảy mươi lăm'],
  ['"12A1" is set apart', 'lớp 12A1', 'lớp mười hai A một'],
  ['"VTV1" is set apart', 'VTV1', 'VTV một'],
  ['"x2" is set apart', 'x2', 'x hai'],
  ['a unit glued to a number is still a unit', 'đi 5km', 'đi năm ki lô mét'],
  // space-separated thousands
  ['space-separated thousands are one number', '1 000 000 đồng', 'một triệu đồng'],
  ['no-break spaces between thousands', '25\u00a0000 người', 'hai mươi lăm nghìn người'],
  ['a phone number in groups is still a phone number', '0912 345 678', 'không chín một hai ba bốn năm sáu bảy tám'],
  ['"+84" groups are still a phone number', '+84 912 345 678', 'cộng tám bốn chín một hai ba bốn năm sáu bảy tám'],
  ['a year then a number are two numbers', 'năm 2024 100 người', 'năm hai nghìn không trăm hai mươi tư một trăm người'],
  // dotted thousands are not phone numbers
  ['dotted billions are not a phone number', '1.000.000.000 đồng', 'một tỷ đồng'],
  // hotlines and landlines
  ['a 1900 hotline is said digit by digit', 'gọi 1900 1234', 'gọi một chín không không một hai ba bốn'],
  ['a 1800 hotline in pairs or with a dash', 'gọi 1800 56 78 hoặc 1800-6868', 'gọi một tám không không năm sáu bảy tám hoặc một tám không không sáu tám sáu tám'],
  ['a landline with its area code in parentheses', '(028) 3822 1234', 'không hai tám ba tám hai hai một hai ba bốn'],
  ['years 1800-1900 are a range, not a hotline', '1800-1900', 'một nghìn tám trăm đến một nghìn chín trăm'],
  // regressions a second probe found in the first version of these rules: each reads as it did before them
  ['a dash count after "ngày" is a range', 'Ngày 2-3 lần, mỗi lần 1 viên.', 'Ngày hai đến ba lần, mỗi lần một viên.'],
  ['a dash count after "mỗi ngày" is a range', 'Mỗi ngày 2-3 cốc nước.', 'Mỗi ngày hai đến ba cốc nước.'],
  ['"mùng 1-2 Tết" is a range', 'Mùng 1-2 Tết.', 'Mùng một đến hai Tết.'],
  ['a holiday length is a range', 'Nghỉ lễ 3-4 ngày.', 'Nghỉ lễ ba đến bốn ngày.'],
  ['a fraction after a date in a list stays a fraction', 'Ngày 12/3, 2/3 số công nhân về quê.', 'Ngày mười hai tháng ba, hai phần ba số công nhân về quê.'],
  ['a count after a dash date stays a range', 'Ngày 5-3, 2-3 người bị thương.', 'Ngày năm tháng ba, hai đến ba người bị thương.'],
  ['a fraction after "hôm qua" stays a fraction', 'Hôm qua 1/3 số chuyến bay bị hủy.', 'Hôm qua một phần ba số chuyến bay bị hủy.'],
  ['a fraction after a verb stays a fraction', 'Quân ta đã giải phóng 2/3 lãnh thổ.', 'Quân ta đã giải phóng hai phần ba lãnh thổ.'],
  ['a full mark stays a mark', 'Điểm đánh giá lên đến 10/10.', 'Điểm đánh giá lên đến mười trên mười.'],
  ['"sau 3/3 trận" is a count', 'Sau 3/3 trận toàn thắng.', 'Sau ba trên ba trận toàn thắng.'],
  ['"giới hạn 5/3" is no date', 'Giới hạn 5/3.', 'Giới hạn năm trên ba.'],
  ['goals conceded are a range', 'Đội bóng thua 2-3 bàn mỗi trận.', 'Đội bóng thua hai đến ba bàn mỗi trận.'],
  ['money won is a range', 'Anh ấy thắng 5-10 triệu mỗi tháng.', 'Anh ấy thắng năm đến mười triệu mỗi tháng.'],
  ['a child named Thắng is no score', 'Bé Thắng 3-4 tuổi đã biết đọc.', 'Bé Thắng ba đến bốn tuổi đã biết đọc.'],
  ['a set named X is no numeral', 'Cho tập X = {1; 2; 3}.', 'Cho tập X = {một; hai; ba}.'],
  ['V.I.P. is initials', 'Đạt cấp V.I.P.', 'Đạt cấp V.I.P.'],
  ['a size XL is no numeral', 'Áo cấp XL.', 'Áo cấp XL.'],
  ['a numbered table stays a code', 'Bàn số 07 giờ này đông khách.', 'Bàn số không bảy giờ này đông khách.'],
  ['a row of room numbers is not joined', 'Phòng 101 102 103.', 'Phòng một trăm linh một một trăm linh hai một trăm linh ba.'],
  ['a month then a count is not joined', 'Tháng 3 100 người nghỉ việc.', 'Tháng ba một trăm người nghỉ việc.'],
  ['spaced digits before a currency are one amount', 'giá 1 234 567 đồng', 'giá một triệu hai trăm ba mươi tư nghìn năm trăm sáu mươi bảy đồng'],
  ['"1800s" are seconds', 'Thời gian chờ 1800s.', 'Thời gian chờ một nghìn tám trăm giây.'],
  ['"thập niên 1990s" is not doubled', 'Thập niên 1990s.', 'Thập niên một nghìn chín trăm chín mươi.'],
  ['"khoảng ~50" is not doubled', 'Khoảng ~50 người.', 'Khoảng năm mươi người.'],
  ['"pha 9:15" without what it mixes with is a time', 'Pha 9:15 là bàn thắng đẹp.', 'Pha chín giờ mười lăm phút là bàn thắng đẹp.'],
  ['"pha 1:10 với nước" is a ratio', 'Pha 1:10 với nước.', 'Pha một trên mười với nước.'],
  ['an order number is no ISO date', 'Đơn hàng 1234-05-06.', 'Đơn hàng một nghìn hai trăm ba mươi tư đến không năm đến không sáu.'],
  ['"năm 1990s" is not doubled', 'Năm 1990s là thập niên.', 'Năm một nghìn chín trăm chín mươi là thập niên.'],
  // a slash after a counted amount
  ['a price per unit: the slash is "mỗi" and the unit is read', 'giá 25.000đ/kg', 'giá hai mươi lăm nghìn đồng mỗi ki lô gam'],
  ['a rate per time word', 'uống 3 lần/ngày, lương 5 triệu/tháng, lãi 6%/năm', 'uống ba lần mỗi ngày, lương năm triệu mỗi tháng, lãi sáu phần trăm mỗi năm'],
  ['a slash without an amount before it is left alone', 'ngày/tháng/năm sinh và/hoặc quê quán', 'ngày/tháng/năm sinh và/hoặc quê quán'],
  ['km/h stays one unit', '60 km/h', 'sáu mươi ki lô mét trên giờ'],
  ['1900 and 1800 alone are numbers', 'năm 1900 có 1800 người', 'năm một nghìn chín trăm có một nghìn tám trăm người'],
  // a third probe: hour ranges with "h" on the second end only
  ['an hour range with "h" on its second end keeps "đến"', 'Mở cửa 8-10h.', 'Mở cửa tám đến mười giờ.'],
  ['an afternoon hour range after "từ"', 'Mưa dông từ 14-16h chiều nay.', 'Mưa dông từ mười bốn đến mười sáu giờ chiều nay.'],
  ['an evening hour range', 'Cắt điện từ 20-22h.', 'Cắt điện từ hai mươi đến hai mươi hai giờ.'],
  ['a spaced hour range', 'Từ 8 - 10h sáng.', 'Từ tám đến mười giờ sáng.'],
  ['hectares after a range are no hours', 'Trồng 5-10ha lúa.', 'Trồng năm đến mười héc ta lúa.'],
  ['numbers past 24 make no hour range (left as before)', 'Pin dùng 25-30h.', 'Pin dùng hai mươi lăm đến ba mươi h.'],
  // news-lede dates
  ['a date in parentheses after "sáng nay"', 'Sáng nay (15/6), Quốc hội họp.', 'Sáng nay (ngày mười lăm tháng sáu), Quốc hội họp.'],
  ['a date in parentheses after "hôm nay"', 'Hôm nay (15/6), giá vàng tăng.', 'Hôm nay (ngày mười lăm tháng sáu), giá vàng tăng.'],
  ['a date after "chiều nay"', 'Chiều nay 15/6, trời mưa.', 'Chiều nay ngày mười lăm tháng sáu, trời mưa.'],
  ['a date after "tối qua" in parentheses', 'Tối qua (14/6) có bão.', 'Tối qua (ngày mười bốn tháng sáu) có bão.'],
  ['a trading session\'s date', 'Phiên giao dịch 14/6, chỉ số giảm.', 'Phiên giao dịch ngày mười bốn tháng sáu, chỉ số giảm.'],
  ['a lunar date', 'Ngày 12/6 (tức 7/5 âm lịch).', 'Ngày mười hai tháng sáu (tức mùng bảy tháng năm âm lịch).'],
  ['a fraction after "sáng nay" stays a fraction', 'Sáng nay 1/3 số học sinh nghỉ.', 'Sáng nay một phần ba số học sinh nghỉ.'],
  ['a fraction in parentheses after "hôm nay" stays a fraction', 'Hôm nay (1/2 số vé) đã bán hết.', 'Hôm nay (một phần hai số vé) đã bán hết.'],
  // dates after "từ", "kể từ", "tính từ"
  ['an effective date after "từ"', 'Luật có hiệu lực từ 1/7.', 'Luật có hiệu lực từ ngày một tháng bảy.'],
  ['a date after "kể từ"', 'Kể từ 1/7, lương cơ sở tăng.', 'Kể từ ngày một tháng bảy, lương cơ sở tăng.'],
  ['a date after "kể từ" before "tới"', 'Áp dụng kể từ 1/7 tới.', 'Áp dụng kể từ ngày một tháng bảy tới.'],
  ['a date after "tính từ" before "đến nay"', 'Tính từ 1/1 đến nay.', 'Tính từ ngày một tháng một đến nay.'],
  ['a date after "bắt đầu từ"', 'Năm học bắt đầu từ 5/9.', 'Năm học bắt đầu từ ngày năm tháng chín.'],
  ['a date range "đến hết"', 'Từ 27/4 đến hết 1/5.', 'Từ ngày hai mươi bảy tháng tư đến hết một tháng năm.'],
  ['fractions after "từ" before "lên" stay fractions', 'tăng từ 1/3 lên 1/2', 'tăng từ một phần ba lên một phần hai'],
  ['a range of fractions after "từ" stays fractions', 'Từ 1/2 đến 2/3 diện tích bị ngập.', 'Từ một phần hai đến hai phần ba diện tích bị ngập.'],
  // days sharing one month
  ['a dash range of days before one month', 'Kỳ thi diễn ra ngày 27-28/6.', 'Kỳ thi diễn ra ngày hai mươi bảy đến hai mươi tám tháng sáu.'],
  ['a range of days after "Ngày"', 'Ngày 10-12/6 tại Hà Nội.', 'Ngày mười đến mười hai tháng sáu tại Hà Nội.'],
  ['a range of days after "từ"', 'Diễn ra từ 10 đến 12/6.', 'Diễn ra từ ngày mười đến mười hai tháng sáu.'],
  ['a list of days before one month', 'Các ngày 12, 13 và 14/6.', 'Các ngày mười hai, mười ba và mười bốn tháng sáu.'],
  ['a range of two dates joined by a dash', 'Ngày 30/4-1/5 nghỉ 5 ngày.', 'Ngày ba mươi tháng tư đến một tháng năm nghỉ năm ngày.'],
  ['a spaced range of two dates after a holiday', 'Dịp 30/4 - 1/5 năm nay.', 'Dịp ba mươi tháng tư đến một tháng năm năm nay.'],
  ['a count and a fraction after "ngày" are no dates', 'Mỗi ngày 1-2/3 cốc.', 'Mỗi ngày một đến hai phần ba cốc.'],
  ['marks before a full mark are no dates', 'Điểm 8, 9 và 10/10.', 'Điểm tám, chín và mười trên mười.'],
  ['a range of two fractions keeps "đến"', '1/2-3/4 cốc', 'một phần hai đến ba phần tư cốc'],
  // scores
  ['a score after "tỷ số lên"', 'nâng tỷ số lên 2-1.', 'nâng tỷ số lên hai – một.'],
  ['a score after "dẫn trước"', 'Việt Nam dẫn trước 1-0.', 'Việt Nam dẫn trước một – không.'],
  ['a score after "đánh bại" and a team', 'Arsenal đánh bại Chelsea 3-1.', 'Arsenal đánh bại Chelsea ba – một.'],
  ['a score after "chung cuộc là"', 'Tỉ số chung cuộc là 3-2.', 'Tỉ số chung cuộc là ba – hai.'],
  ['an ascending score after "kết quả"', 'Kết quả 1-2.', 'Kết quả một – hai.'],
  ['scores between team names', 'Kết quả: Hà Nội 2-1 HAGL, Viettel 0-0 Nam Định.', 'Kết quả: Hà Nội hai – một HAGL, Viettel không – không Nam Định.'],
  ['a half-time score in parentheses', 'Kết quả: 2-1 (hiệp 1: 1-0).', 'Kết quả: hai – một (hiệp một: một – không).'],
  ['a descending pair opening a sentence is a score', 'Thắng 3-1 trên sân Thống Nhất.', 'Thắng ba – một trên sân Thống Nhất.'],
  ['every set of a list is a score', 'Djokovic thắng 6-4, 6-7, 7-6.', 'Djokovic thắng sáu – bốn, sáu – bảy, bảy – sáu.'],
  ['a team name with digits before a score', 'hòa U23 Thái Lan 2-2.', 'hòa U hai mươi ba Thái Lan hai – hai.'],
  ['a rising pair without a score word is a range', 'Tuổi 18-25.', 'Tuổi mười tám đến hai mươi lăm.'],
  ['a rising pair between capitalised words is a range', 'Điều 5-7 Luật Đất đai.', 'Điều năm đến bảy Luật Đất đai.'],
  ['a descending pair after "từ" is a range', 'Nhiệt độ giảm từ 10-5.', 'Nhiệt độ giảm từ mười đến năm.'],
  ['a descending pair before a counted noun is a range', 'thắng 5-3 trận', 'thắng năm đến ba trận'],
  ['a formation is no score', 'Sơ đồ 4-4-2.', 'Sơ đồ bốn đến bốn đến hai.'],
  ['a lot code is left as before', 'Lô B2-05.', 'Lô B hai đến không năm.'],
  // codes read digit by digit
  ['a one-time code after "Mã OTP:"', 'Mã OTP: 482915.', 'Mã OTP: bốn tám hai chín một năm.'],
  ['a code after "Mã xác thực của bạn là"', 'Mã xác thực của bạn là 730264.', 'Mã xác thực của bạn là bảy ba không hai sáu bốn.'],
  ['a code after "mã"', 'Nhập mã 5678 để xác nhận.', 'Nhập mã năm sáu bảy tám để xác nhận.'],
  ['a password', 'Mật khẩu 123456.', 'Mật khẩu một hai ba bốn năm sáu.'],
  ['a PIN with a leading zero', 'PIN: 0123', 'PIN: không một hai ba'],
  ['a house number stays a cardinal', 'Nhà số 5678.', 'Nhà số năm nghìn sáu trăm bảy mươi tám.'],
  ['a battery\'s capacity is no PIN', 'PIN 5000 mAh.', 'PIN năm nghìn mi li am pe giờ.'],
  // legal document numbers
  ['a decree\'s number, year and code', 'Nghị định 100/2019/NĐ-CP', 'Nghị định một trăm năm hai nghìn không trăm mười chín nghị định chính phủ'],
  ['a circular\'s number is no month', 'Thông tư 01/2024/TT-BTC', 'Thông tư một năm hai nghìn không trăm hai mươi tư TT-BTC'],
  ['a decision\'s number is no month', 'Quyết định 12/2023/QĐ-TTg', 'Quyết định mười hai năm hai nghìn không trăm hai mươi ba QĐ-TTg'],
  ['a law\'s number after "số"', 'Luật số 59/2020/QH14', 'Luật số năm mươi chín năm hai nghìn không trăm hai mươi QH mười bốn'],
  ['a decree\'s number without a code is no fraction', 'Theo Nghị định số 15/2020, mức phạt tăng.', 'Theo Nghị định số mười lăm năm hai nghìn không trăm hai mươi, mức phạt tăng.'],
  ['a month and year stay a month and year', 'Từ tháng 6/2024.', 'Từ tháng sáu năm hai nghìn không trăm hai mươi tư.'],
  // ranges with a unit on both ends
  ['a range of millions', 'Lương 5tr-7tr.', 'Lương năm triệu đến bảy triệu.'],
  ['a range of thousands', 'Giá từ 200k-300k.', 'Giá từ hai trăm nghìn đến ba trăm nghìn.'],
  ['a range of temperatures', 'Nhiệt độ 35°C-37°C.', 'Nhiệt độ ba mươi lăm độ xê đến ba mươi bảy độ xê.'],
  ['a spaced range of prices', 'Giá từ 200.000đ - 300.000đ.', 'Giá từ hai trăm nghìn đồng đến ba trăm nghìn đồng.'],
  ['a spaced range of distances', 'Phạm vi 5km - 10km.', 'Phạm vi năm ki lô mét đến mười ki lô mét.'],
  ['a spaced range of percentages', 'Lạm phát 3,25% - 3,5%.', 'Lạm phát ba phẩy hai mươi lăm phần trăm đến ba phẩy năm phần trăm.'],
  ['a split of percentages is no range', 'Kiểm soát bóng 65% - 35%.', 'Kiểm soát bóng sáu mươi lăm phần trăm - ba mươi lăm phần trăm.'],
  ['a name-number hyphen is still a code', 'COVID-19', 'COVID mười chín'],
  // informal amounts
  ['millions and a digit', 'giá 1tr2?', 'giá một triệu hai?'],
  ['two-digit millions and a digit', 'Lương 12tr5.', 'Lương mười hai triệu năm.'],
  ['millions and thousands', 'Giá chỉ 2tr990k.', 'Giá chỉ hai triệu chín trăm chín mươi nghìn.'],
  ['"tr" after a space', 'Giá 3 tr đồng.', 'Giá ba triệu đồng.'],
  ['a word starting with "tr" is no million', 'Có 2 trẻ em.', 'Có hai trẻ em.'],
  // quarters
  ['a quarter with its year after a slash', 'Doanh thu Q1/2024 tăng.', 'Doanh thu quý một năm hai nghìn không trăm hai mươi tư tăng.'],
  ['a quarter with its year after a dot', 'Lợi nhuận Q3.2023 giảm.', 'Lợi nhuận quý ba năm hai nghìn không trăm hai mươi ba giảm.'],
  ['a bare Q and a number is left as before', 'Lợi nhuận Q4 tăng.', 'Lợi nhuận Q bốn tăng.'],
  // addresses and places named after dates
  ['an alley number is "trên", not a fraction', 'Số 8, ngách 15/22, ngõ 100', 'Số tám, ngách mười lăm trên hai mươi hai, ngõ một trăm'],
  ['every part of an alley number', 'Hẻm 123/45/6 Lê Văn Sỹ.', 'Hẻm một trăm hai mươi ba trên bốn mươi lăm trên sáu Lê Văn Sỹ.'],
  ['an alley number is no date', 'ngõ 3/12', 'ngõ ba trên mười hai'],
  ['a street named after a date', 'Nhà hàng trên đường 3/2, quận 10.', 'Nhà hàng trên đường ba tháng hai, quận mười.'],
  ['a park named after a date', 'Công viên 23/9', 'Công viên hai mươi ba tháng chín'],
  ['a victory named after a date', 'Chiến thắng 30/4 lịch sử.', 'Chiến thắng ba mươi tháng tư lịch sử.'],
  ['a fraction after "chiến thắng" stays a fraction', 'Đảng này chiến thắng 2/3 số ghế.', 'Đảng này chiến thắng hai phần ba số ghế.'],
  ['a fraction after "đường" stays a fraction', 'Thêm đường 1/2 thìa.', 'Thêm đường một phần hai thìa.'],
  // the đồng sign
  ['"₫" after an amount is "đồng"', 'Tổng cộng: 2.345.000₫.', 'Tổng cộng: hai triệu ba trăm bốn mươi lăm nghìn đồng.'],
];

/** One test per row: the rule's name, the input and what the reading must be. */
function tableTests(title: string, cases: Case[], read: (input: string) => string): void {
  for (const [rule, input, expected] of cases) {
    test(`${title}: ${rule}: ${JSON.stringify(input)} → ${JSON.stringify(expected)}`, (t) => {
      t.is(read(input), expected);
    });
  }
}

tableTests('text reading', READINGS, normalizeText);

const moderation = new ModerationList([]);

// aiRefine runs before preparation; units and currencies after an amount must reach it unspelled.
const REFINED_READINGS: Case[] = [
  ['a currency after an amount is not spelled', '5 USD', 'năm đô la Mỹ'],
  ['a unit after an amount is not spelled', '512 GB', 'năm trăm mười hai gi ga bai'],
  ['"VNĐ" after an amount is not spelled', '100 VNĐ', 'một trăm đồng'],
  ['a currency after a scale word is not spelled', '5 triệu USD', 'năm triệu đô la Mỹ'],
  ['an acronym that is not after an amount is still spelled', 'GDP tăng', 'gờ đê pê tăng'],
  ['an acronym after a month number is no unit (MB the bank)', 'Tháng 5 MB tăng lãi suất', 'Tháng năm mờ bê tăng lãi suất'],
  ['a one-time code after the spelled "OTP" is still read digit by digit', 'Mã OTP: 482915.', 'Mã o tê pê: bốn tám hai chín một năm.'],
  ['a score after a spelled team name', 'thắng SLNA 2-1.', 'thắng ét lờ nờ a hai – một.'],
];

tableTests('aiRefine then text reading', REFINED_READINGS, (input) => normalizeText(refineText(input, moderation).text));
