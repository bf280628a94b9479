import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';

/**
 * The systems of record a test runs on: always the embedded defaults, and
 * MongoDB when `npm test`'s runner (or the caller) set MONGODB_URL. Each
 * MongoDB use gets a database of its own, dropped by `drop`. A missing
 * MongoDB is said once per suite.
 */
export interface StackUse {
  /** configuration variables selecting the stack (add them to the platform's env) */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export interface Stack {
  name: 'embedded' | 'mongo';
  use(): StackUse;
}

const mongoUrl = process.env.MONGODB_URL;

export function recordStacks(suite: string): Stack[] {
  const stacks: Stack[] = [{ name: 'embedded', use: () => ({ env: {}, drop: async () => undefined }) }];
  if (!mongoUrl) {
    console.log(`${suite}: MongoDB runs skipped, MONGODB_URL is not set`);
    return stacks;
  }
  stacks.push({
    name: 'mongo',
    use() {
      const name = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      return {
        env: { MONGODB_URL: mongoUrl, MONGODB_DB: name },
        async drop() {
          const client = new MongoClient(mongoUrl);
          try {
            await client.db(name).dropDatabase();
          } finally {
            await client.close();
          }
        },
      };
    },
  });
  return stacks;
}
