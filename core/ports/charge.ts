/** A charge that happened; kept with jobs so a later refund returns to the payer. */
export interface Charge {
  id: string;
  grantId: string;
  accountId: string;
  keyId: string | null;
  tokens: number;
  engine: string;
  route: string;
  requestId: string | null;
  dayKey: string;
  weekKey: string;
  at: string;
}
