/**
 * Ledger routes of charges that no API request makes. An audiobook chapter
 * is charged by the audiobook scheduler when its render starts, not by a
 * request, so usage analytics (which records requests, under the SPEC's
 * route names) has no row for it: the book's own totals show it. Usage
 * reconciliation leaves these routes out of the ledger side of its
 * comparison; the grant-against-ledger check counts every entry.
 */
export const AUDIOBOOK_CHARGE_ROUTE = 'audiobook';

export const ROUTES_WITHOUT_USAGE: readonly string[] = [AUDIOBOOK_CHARGE_ROUTE];
