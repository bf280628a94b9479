/**
 * Reads simple formulas the way a Vietnamese teacher would ("a+b=c" → "a
 * cộng bê bằng xê", "x^2" → "ích bình phương"). Only runs that contain a
 * clear operator are touched, so hyphenated words and dates stay as written.
 * Digits are left for text preparation to read.
 */
import { LETTER_NAMES } from './spelling.ts';

const OPERAND = String.raw`(?:√?[\p{L}\p{N}]+(?:[.,]\d+)?[²³]?|\([^()]*\)[²³]?)`;
const OPERATOR = String.raw`(?:<=|>=|!=|[-+*/×÷^=<>≤≥≠])`;
const FORMULA = new RegExp(String.raw`(?<![\p{L}\p{N}])${OPERAND}(?:\s*${OPERATOR}\s*${OPERAND})+`, 'gu');
/** A run is a formula only if it has one of these; "-" and "/" alone are hyphens and slashes. */
const STRONG = /[+*×÷^=<>≤≥≠]/u;
const TOKEN = /<=|>=|!=|[-+*/×÷^=<>≤≥≠()√²³]|[\p{L}\p{N}]+(?:[.,]\d+)?/gu;

const OPERATOR_WORDS: Record<string, string> = {
  '+': 'cộng', '-': 'trừ', '*': 'nhân', '×': 'nhân', '/': 'chia', '÷': 'chia', '=': 'bằng',
  '<': 'nhỏ hơn', '>': 'lớn hơn', '<=': 'nhỏ hơn hoặc bằng', '≤': 'nhỏ hơn hoặc bằng',
  '>=': 'lớn hơn hoặc bằng', '≥': 'lớn hơn hoặc bằng', '!=': 'khác', '≠': 'khác',
  '(': 'mở ngoặc', ')': 'đóng ngoặc', '√': 'căn', '²': 'bình phương', '³': 'lập phương',
};

/** Short lower-case runs and single capitals are variables, read letter by letter ("mc" → "mờ xê"). */
function readOperand(token: string): string {
  const coefficient = /^(\d+(?:[.,]\d+)?)([a-z]{1,3})$/u.exec(token);
  if (coefficient) return `${coefficient[1]} ${readOperand(coefficient[2])}`;
  if (/^(?:[a-z]{1,3}|[A-Z])$/u.test(token)) {
    return Array.from(token, (ch) => LETTER_NAMES[ch.toUpperCase()]).join(' ');
  }
  return token;
}

function readExponent(exponent: string): string {
  if (exponent === '2') return 'bình phương';
  if (exponent === '3') return 'lập phương';
  return `mũ ${readOperand(exponent)}`;
}

function readFormula(formula: string): string {
  const tokens = formula.match(TOKEN) ?? [];
  const words: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '^' && i + 1 < tokens.length && !OPERATOR_WORDS[tokens[i + 1]]) {
      words.push(readExponent(tokens[++i]));
    } else {
      words.push(OPERATOR_WORDS[tok] ?? readOperand(tok));
    }
  }
  return words.join(' ');
}

export function readFormulas(text: string): string {
  return text
    .replace(FORMULA, (run) => (STRONG.test(run) ? readFormula(run) : run))
    .replace(/(?<=[\p{L}\p{N})])\s*([²³])/gu, (_m, sup: string) => ` ${OPERATOR_WORDS[sup]}`)
    .replace(/√\s*(?=[\p{L}\p{N}(])/gu, 'căn ');
}
