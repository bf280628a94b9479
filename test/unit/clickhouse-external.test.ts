import test from 'ava';
import { externalTableForm, selectWithExternal, tsvField } from '../../core/adapters/analytics/clickhouse-external.ts';
import { isClosedSocket } from '../../core/adapters/analytics/clickhouse-closed-socket.ts';
import { sqlString } from '../../core/adapters/analytics/clickhouse-sql.ts';
import { reachable } from '../helpers/reachable.ts';

test('tsvField escapes what would end a TabSeparated field or row, and nothing else', (t) => {
  t.is(tsvField('job_01HZX'), 'job_01HZX');
  t.is(tsvField('a\tb\nc\\d\re\0f'), 'a\\tb\\nc\\\\d\\re\\0f');
  t.is(tsvField("it's “Việt” 🎙"), "it's “Việt” 🎙");
  t.is(tsvField(18446744073709551615n), '18446744073709551615');
  t.throws(() => tsvField(42 as unknown as string), { instanceOf: TypeError });
});

test('externalTableForm carries the query and one row per value, and describes the table in URL parameters', async (t) => {
  const { form, params } = externalTableForm('SELECT 1', [{ name: 'lookup_ids', column: 'job_id', type: 'String', values: ['a', 'b\tc'] }]);
  t.is(form.get('query'), 'SELECT 1');
  t.is(await (form.get('lookup_ids') as Blob).text(), 'a\nb\\tc\n');
  t.deepEqual(params, { lookup_ids_structure: 'job_id String', lookup_ids_format: 'TabSeparated' });
  const empty = externalTableForm('SELECT 1', [{ name: 'ids', column: 'id', type: 'UInt64', values: [] }]);
  t.is(await (empty.form.get('ids') as Blob).text(), '');
});

test('externalTableForm refuses names that are not plain identifiers, and a table given twice', (t) => {
  t.throws(() => externalTableForm('SELECT 1', [{ name: 'x; DROP', column: 'id', type: 'String', values: [] }]), { instanceOf: TypeError });
  t.throws(() => externalTableForm('SELECT 1', [{ name: 'ids', column: 'id id', type: 'String', values: [] }]), { instanceOf: TypeError });
  const twice = { name: 'ids', column: 'id', type: 'String', values: [] } as const;
  t.throws(() => externalTableForm('SELECT 1', [twice, twice]), { instanceOf: TypeError, message: /twice/ });
});

test('a socket closed under fetch counts as closed (its error is the cause), other failures do not', (t) => {
  t.true(isClosedSocket(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) })));
  t.true(isClosedSocket(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })));
  t.false(isClosedSocket(new TypeError('fetch failed', { cause: new Error('getaddrinfo ENOTFOUND') })));
  t.false(isClosedSocket(new Error('ClickHouse answered 500: Code: 60')));
});

const clickhouseUrl = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
if (reachable(new URL('/ping', clickhouseUrl).href)) {
  const endpoint = { url: clickhouseUrl, user: process.env.CLICKHOUSE_USER ?? 'default', password: process.env.CLICKHOUSE_PASSWORD ?? '' };
  const nasty = [
    'job_01HZX', '', "it's", 'a\\b', 'tab\there', 'new\nline', 'cr\rlf', 'nul\0end', '\\t is not a tab',
    String.fromCharCode(...Array.from({ length: 32 }, (_, i) => i), 127), 'Tiếng Việt 🎙 – “quotes”',
  ];

  test('ClickHouse reads every value back exactly from the external table', async (t) => {
    const rows = await selectWithExternal(endpoint, 'SELECT job_id FROM lookup_ids', [{ name: 'lookup_ids', column: 'job_id', type: 'String', values: nasty }]);
    t.deepEqual(rows.map((row) => row.job_id), nasty);
    const found = await selectWithExternal(
      endpoint, `SELECT count() AS n FROM (SELECT arrayJoin([${nasty.map(sqlString).join(', ')}, 'absent']) AS v) WHERE v IN lookup_ids`,
      [{ name: 'lookup_ids', column: 'job_id', type: 'String', values: nasty }],
    );
    t.is(Number(found[0]!.n), nasty.length);
    const hashes = await selectWithExternal(endpoint, 'SELECT toString(h) AS h FROM hashes', [{ name: 'hashes', column: 'h', type: 'UInt64', values: [0n, 18446744073709551615n] }]);
    t.deepEqual(hashes.map((row) => row.h), ['0', '18446744073709551615']);
  });

  test('a query longer than a URL may be (ClickHouse 18.16 refused one of 23 KB) goes in the form, beside two tables', async (t) => {
    const names = Array.from({ length: 2000 }, (_, i) => sqlString(`acct_${String(i).padStart(6, '0')}`)).join(', ');
    const rows = await selectWithExternal(endpoint, `SELECT count() AS n FROM lookup_ids WHERE job_id IN (${names}) AND job_id NOT IN skip`, [
      { name: 'lookup_ids', column: 'job_id', type: 'String', values: ['acct_000007', 'acct_000008', 'acct_999999'] },
      { name: 'skip', column: 'job_id', type: 'String', values: ['acct_000008'] },
    ]);
    t.is(Number(rows[0]!.n), 1);
  });

  test('look-ups back to back and at once on kept-alive sockets all answer', async (t) => {
    const values = Array.from({ length: 500 }, (_, i) => `job_${i}`);
    for (let round = 0; round < 100; round++) {
      const answers = await Promise.all([0, 1, 2].map(() => selectWithExternal(endpoint, 'SELECT count() AS n FROM lookup_ids', [{
        name: 'lookup_ids', column: 'job_id', type: 'String', values,
      }])));
      for (const rows of answers) t.is(Number(rows[0]!.n), 500);
    }
  });

  test('a failed query answers ClickHouse\'s own message', async (t) => {
    const error = await t.throwsAsync(selectWithExternal(endpoint, 'SELECT nope FROM lookup_ids', [{ name: 'lookup_ids', column: 'job_id', type: 'String', values: ['a'] }]));
    t.regex(error!.message, /^ClickHouse answered \d{3}: .*nope/s);
  });
} else {
  console.log(`clickhouse-external: ClickHouse not reachable at ${clickhouseUrl}; skipping the round-trip tests`);
}
