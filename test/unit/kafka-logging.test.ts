import test from 'ava';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaLogging, kafkaLogLevel } from '../../core/adapters/bus/kafka-support.ts';
import { createLogger, type LogLevel } from '../../core/logger.ts';

/**
 * kafkajs's log lines (core/adapters/bus/kafka-support.ts) share the
 * platform's format and obey LOG_LEVEL: no `{"level":"ERROR","timestamp",
 * "logger":"kafkajs","message"}` lines of their own, none at all when silent.
 */
function captureStderr(run: () => void): Array<Record<string, unknown>> {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    run();
  } finally {
    process.stderr.write = write;
  }
  return lines.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** kafkajs's own root logger, configured as the adapter configures it, logging one line at each level. */
function logEachLevel(level: LogLevel): Array<Record<string, unknown>> {
  return captureStderr(() => {
    const kafka = new Kafka({ clientId: 'log-test', brokers: ['127.0.0.1:1'], ...kafkaLogging(createLogger(level), level) });
    const log = kafka.logger().namespace('Connection');
    log.error('Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', clientId: 'log-test', stack: 'Error: …' });
    log.warn('a warning');
    log.info('an info line');
    log.debug('a debug line');
    // An error response kafkajs or the adapter retries is left out at every level.
    log.error('Response Metadata(key: 3, version: 6)', { error: 'There is no leader for this topic-partition' });
  });
}

test('kafkajs lines are the platform logger\'s lines: {t, level, msg} with logger "kafkajs" and its fields', (t) => {
  const [error, ...rest] = logEachLevel('info');
  t.is(rest.length, 1, 'WARN and above, as before: kafkajs INFO is chatter');
  t.like(error, { level: 'error', msg: 'Connection error: connect ECONNREFUSED 127.0.0.1:1', logger: 'kafkajs', namespace: 'Connection', broker: '127.0.0.1:1', clientId: 'log-test' });
  t.regex(String(error!.t), /^\d{4}-\d\d-\d\dT/);
  t.false('timestamp' in error! || 'message' in error!, JSON.stringify(error));
  t.like(rest[0], { level: 'warn', msg: 'a warning', logger: 'kafkajs' });
});

test('LOG_LEVEL governs kafkajs: silent prints nothing, error only errors, debug every level', (t) => {
  t.deepEqual(logEachLevel('silent'), []);
  t.deepEqual(logEachLevel('error').map((l) => l.level), ['error']);
  t.deepEqual(logEachLevel('warn').map((l) => l.level), ['error', 'warn']);
  t.deepEqual(logEachLevel('debug').map((l) => l.level), ['error', 'warn', 'info', 'debug']);
});

test('kafkajs\'s own threshold follows LOG_LEVEL, WARN unless the platform logs debug', (t) => {
  t.is(kafkaLogLevel('info'), logLevel.WARN);
  t.is(kafkaLogLevel('warn'), logLevel.WARN);
  t.is(kafkaLogLevel('debug'), logLevel.DEBUG);
  t.is(kafkaLogLevel('error'), logLevel.ERROR);
  t.is(kafkaLogLevel('silent'), logLevel.NOTHING);
});
