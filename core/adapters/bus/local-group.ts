/**
 * In-process consumer-group membership for the local bus. Partitions are
 * dealt round-robin to the live members of a group; a partition is handled
 * by one member at a time (the `busy` set), so when a rebalance moves it the
 * new owner starts only after the old one has finished its message and
 * committed. That is what keeps per-key order across rebalances.
 */

export class Member {
  readonly assigned = new Set<number>();
  stopped = false;
  private generation = 0;
  private readonly waiters = new Set<() => void>();

  /** Something changed (publish, rebalance, a partition freed, stop): sleepers look again. */
  readonly wake = (): void => {
    this.generation++;
    for (const waiter of [...this.waiters]) waiter();
  };

  get seen(): number {
    return this.generation;
  }

  /** Waits up to `ms`, returning early if woken since `seen` was read. */
  sleep(seen: number, ms: number): Promise<void> {
    if (this.stopped || this.generation !== seen || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** A retry backoff that only stop() cuts short; false when the member was stopped. */
  async pause(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!this.stopped && Date.now() < end) await this.sleep(this.seen, end - Date.now());
    return !this.stopped;
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }
}

export class GroupState {
  private readonly members: Member[] = [];
  private readonly busy = new Set<number>();
  private cursor = 0;

  constructor(private readonly partitions: number) {}

  add(member: Member): void {
    this.members.push(member);
    this.rebalance();
  }

  remove(member: Member): void {
    const index = this.members.indexOf(member);
    if (index >= 0) this.members.splice(index, 1);
    this.rebalance();
  }

  get size(): number {
    return this.members.length;
  }

  private rebalance(): void {
    this.members.forEach((member, index) => {
      member.assigned.clear();
      for (let part = index; part < this.partitions; part += this.members.length) member.assigned.add(part);
    });
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const member of this.members) member.wake();
  }

  /** Takes one of the member's partitions that has a backlog and nobody handling it, fairly rotating. */
  claim(member: Member, backlog: readonly number[]): number | undefined {
    const candidates = backlog.filter((part) => member.assigned.has(part) && !this.busy.has(part)).sort((a, b) => a - b);
    if (candidates.length === 0) return undefined;
    const part = candidates.find((p) => p >= this.cursor) ?? candidates[0]!;
    this.cursor = part + 1;
    this.busy.add(part);
    return part;
  }

  claimAll(member: Member, backlog: readonly number[]): number[] {
    const parts = backlog.filter((part) => member.assigned.has(part) && !this.busy.has(part));
    for (const part of parts) this.busy.add(part);
    return parts;
  }

  release(parts: Iterable<number>): void {
    for (const part of parts) this.busy.delete(part);
    this.wakeAll();
  }
}
