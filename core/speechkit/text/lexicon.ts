/**
 * Word tables for text preparation. Kept apart from the rules so that adding
 * an abbreviation or a unit is a one-line change with no regex in sight.
 */

/** Written abbreviations, matched case-sensitively as whole tokens. Longest first at use. */
export const ABBREVIATIONS: Record<string, string> = {
  'TP.HCM': 'thành phố Hồ Chí Minh',
  'TP. HCM': 'thành phố Hồ Chí Minh',
  'Tp.HCM': 'thành phố Hồ Chí Minh',
  'TP HCM': 'thành phố Hồ Chí Minh',
  TPHCM: 'thành phố Hồ Chí Minh',
  HCM: 'Hồ Chí Minh',
  'TP.': 'thành phố',
  'Tp.': 'thành phố',
  TP: 'thành phố',
  HN: 'Hà Nội',
  VN: 'Việt Nam',
  UBND: 'ủy ban nhân dân',
  HĐND: 'hội đồng nhân dân',
  'CHXHCN': 'cộng hòa xã hội chủ nghĩa',
  XHCN: 'xã hội chủ nghĩa',
  THPT: 'trung học phổ thông',
  THCS: 'trung học cơ sở',
  ĐH: 'đại học',
  CĐ: 'cao đẳng',
  'GS.TS': 'giáo sư tiến sĩ',
  'PGS.TS': 'phó giáo sư tiến sĩ',
  'PGS.': 'phó giáo sư',
  PGS: 'phó giáo sư',
  'GS.': 'giáo sư',
  'TS.': 'tiến sĩ',
  'ThS.': 'thạc sĩ',
  ThS: 'thạc sĩ',
  'BS.': 'bác sĩ',
  'KS.': 'kỹ sư',
  CSGT: 'cảnh sát giao thông',
  BHXH: 'bảo hiểm xã hội',
  BHYT: 'bảo hiểm y tế',
  CTCP: 'công ty cổ phần',
  TNHH: 'trách nhiệm hữu hạn',
  KCN: 'khu công nghiệp',
  ĐBSCL: 'đồng bằng sông Cửu Long',
  LHQ: 'Liên Hợp Quốc',
  CLB: 'câu lạc bộ',
  HLV: 'huấn luyện viên',
  NXB: 'nhà xuất bản',
  SĐT: 'số điện thoại',
  'GD&ĐT': 'giáo dục và đào tạo',
  CNTT: 'công nghệ thông tin',
  ATGT: 'an toàn giao thông',
  PCCC: 'phòng cháy chữa cháy',
  BĐS: 'bất động sản',
  ĐBQH: 'đại biểu quốc hội',
  QH: 'quốc hội',
  TW: 'trung ương',
  'NĐ-CP': 'nghị định chính phủ',
  'v.v.': 'vân vân',
  'v.v': 'vân vân',
};

/** Units read only right after a number. Longest first at use. */
export const UNITS: Record<string, string> = {
  'km/h': 'ki lô mét trên giờ',
  'm/s': 'mét trên giây',
  km2: 'ki lô mét vuông',
  'km²': 'ki lô mét vuông',
  m2: 'mét vuông',
  'm²': 'mét vuông',
  m3: 'mét khối',
  'm³': 'mét khối',
  cm2: 'xen ti mét vuông',
  'cm²': 'xen ti mét vuông',
  km: 'ki lô mét',
  cm: 'xen ti mét',
  mm: 'mi li mét',
  m: 'mét',
  kg: 'ki lô gam',
  mg: 'mi li gam',
  g: 'gam',
  ml: 'mi li lít',
  l: 'lít',
  ha: 'héc ta',
  '°C': 'độ xê',
  '°F': 'độ ép',
  '°': 'độ',
  kWh: 'ki lô oát giờ',
  kW: 'ki lô oát',
  MW: 'mê ga oát',
  W: 'oát',
  mAh: 'mi li am pe giờ',
  // Electrical units. A bare "A" is not here (it is also a class or a house number, "lớp 12A"): readUnits reads
  // amperes only after volts ("5V/2A") or a word about current ("sạc 2A").
  Ah: 'am pe giờ',
  mA: 'mi li am pe',
  kVA: 'ki lô vôn am pe',
  kV: 'ki lô vôn',
  mV: 'mi li vôn',
  V: 'vôn',
  GHz: 'gi ga héc',
  MHz: 'mê ga héc',
  kHz: 'ki lô héc',
  Hz: 'héc',
  TB: 'tê ra bai',
  GB: 'gi ga bai',
  MB: 'mê ga bai',
  KB: 'ki lô bai',
  ms: 'mi li giây',
  s: 'giây',
  'ph': 'phút',
  // Blood pressure, air quality, lab values, data rates, litres, pressure, frames and camera resolution.
  mmHg: 'mi li mét thủy ngân',
  'µg/m³': 'mi crô gam trên mét khối',
  'µg/m3': 'mi crô gam trên mét khối',
  'μg/m³': 'mi crô gam trên mét khối',
  'μg/m3': 'mi crô gam trên mét khối',
  µg: 'mi crô gam',
  μg: 'mi crô gam',
  mcg: 'mi crô gam',
  'mmol/L': 'mi li mol trên lít',
  'mmol/l': 'mi li mol trên lít',
  mmol: 'mi li mol',
  'mg/dL': 'mi li gam trên đề xi lít',
  'mg/dl': 'mi li gam trên đề xi lít',
  'g/dL': 'gam trên đề xi lít',
  'g/dl': 'gam trên đề xi lít',
  ppm: 'phần triệu',
  Gbps: 'gi ga bít trên giây',
  Mbps: 'mê ga bít trên giây',
  kbps: 'ki lô bít trên giây',
  Kbps: 'ki lô bít trên giây',
  L: 'lít',
  kPa: 'ki lô pát xcan',
  hPa: 'héc tô pát xcan',
  fps: 'khung hình trên giây',
  MP: 'mê ga pixel',
};

/** Currency written after the amount. */
export const CURRENCY_AFTER: Record<string, string> = {
  'đ': 'đồng',
  'Đ': 'đồng',
  '₫': 'đồng',
  VND: 'đồng',
  VNĐ: 'đồng',
  'vnđ': 'đồng',
  'vnd': 'đồng',
  USD: 'đô la Mỹ',
  '$': 'đô la',
  EUR: 'ơ rô',
  '€': 'ơ rô',
  '£': 'bảng Anh',
  '¥': 'yên',
};

/** Currency symbols written before the amount ("$5"). */
export const CURRENCY_BEFORE: Record<string, string> = {
  $: 'đô la',
  '€': 'ơ rô',
  '£': 'bảng Anh',
  '¥': 'yên',
};

/** Informal scale suffixes on amounts: "50k", "2tr". */
export const SCALE_SUFFIXES: Record<string, string> = {
  k: 'nghìn',
  K: 'nghìn',
  tr: 'triệu',
  ty: 'tỷ',
  'tỷ': 'tỷ',
  'triệu': 'triệu',
  'nghìn': 'nghìn',
  'ngàn': 'nghìn',
};

/** Escapes a literal for use inside a RegExp. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** An alternation of the keys, longest first so "km/h" wins over "km". */
export function alternation(keys: string[]): string {
  return [...keys].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
}
