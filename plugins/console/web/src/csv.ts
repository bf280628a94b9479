/**
 * CSV export (RFC 4180): the API's own field names as the header, the API's
 * numbers unchanged, so a spreadsheet shows what `GET /usage` answered.
 */

export function toCsv(columns: string[], rows: Array<Record<string, unknown>>): string {
  const cell = (value: unknown): string => {
    const text = value === null || value === undefined ? '' : String(value);
    // Quote what would break a row, and defuse formulas a spreadsheet would run.
    const safe = /^[=+\-@\t\r]/.test(text) && Number.isNaN(Number(text)) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c])).join(','))].join('\r\n') + '\r\n';
}

/** Offers `text` as a file download. */
export function download(filename: string, text: string | Blob, type = 'text/csv;charset=utf-8'): void {
  const blob = typeof text === 'string' ? new Blob([text], { type }) : text;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
