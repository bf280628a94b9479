/** Worker-thread entry of the preparation pool: one SpeechTextInput in, one SpeechTextOutcome out. */
import { parentPort } from 'node:worker_threads';
import { speechText, type SpeechTextInput } from './speech-text.ts';

parentPort!.on('message', (input: SpeechTextInput) => {
  parentPort!.postMessage(speechText(input));
});
