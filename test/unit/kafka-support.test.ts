import test from 'ava';
import kafkajs from 'kafkajs';
import { isTransient } from '../../core/adapters/bus/kafka-support.ts';

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSNonRetriableError, KafkaJSRequestTimeoutError } = kafkajs;

/*
 * The Kafka bus repeats a publish while the broker is out of reach (a
 * restart) and fails it at once when the broker refused it for good; these
 * are the errors kafkajs raises in each case.
 */

test('a broker out of reach is transient, also once kafkajs gave up on its own retries', (t) => {
  const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { broker: '127.0.0.1:9092', code: 'ECONNREFUSED' });
  t.true(isTransient(refused));
  t.true(isTransient(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 5, retryTime: 4800 })));
  t.true(isTransient(new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {} as never)));
  t.true(isTransient(new KafkaJSProtocolError({ message: 'This is not the correct leader', type: 'NOT_LEADER_FOR_PARTITION', code: 6, retriable: true } as never)));
});

test('a request the broker refuses for good is not transient', (t) => {
  t.false(isTransient(new KafkaJSProtocolError({ message: 'The request included a message larger than the max message size', type: 'MESSAGE_TOO_LARGE', code: 10, retriable: false } as never)));
  t.false(isTransient(new KafkaJSNonRetriableError('Invalid topic')));
  t.false(isTransient(new TypeError('value is not serialisable')));
  t.false(isTransient(undefined));
});
