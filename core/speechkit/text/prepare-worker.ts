/** Worker-thread entry of the preparation pool: one SpeechTextInput in, one SpeechTextOutcome out. */
import { parentPort } from 'node:worker_threads';
import { yieldToEventLoop } from '../worker-pool.ts';
import { speechText, type SpeechTextInput } from './speech-text.ts';

yieldToEventLoop();

parentPort!.on('message', (input: SpeechTextInput) => {
  parentPort!.postMessage(speechText(input));
});
