/**
 * The server's prompts (SPEC MCP server): ready-made requests a user can
 * pick in their assistant, each steering the model to the right tools.
 */

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  /** the user message the prompt stands for */
  text(args: Record<string, string>): string;
}

const arg = (name: string, description: string, required = false): PromptArgument => ({ name, description, required });

export function prompts(audiobooks: boolean): PromptDefinition[] {
  const list: PromptDefinition[] = [
    {
      name: 'what_can_vieneu_do',
      title: 'What can VieNeu do?',
      description: 'An overview of this Vietnamese text-to-speech service and what it costs.',
      arguments: [],
      text: () => 'Call list_capabilities and get_token_balance, then explain in a few sentences what VieNeu can do for me (Vietnamese text to speech' +
        `${audiobooks ? ', audiobooks' : ''}), what it costs in tokens, and how many tokens I have left.`,
    },
    {
      name: 'read_text',
      title: 'Read a text aloud',
      description: 'Turns a text into speech and gives the link.',
      arguments: [arg('text', 'The text to read', true), arg('voice', 'A voice name or id, or how it should sound (e.g. "giọng nữ miền Nam")')],
      text: ({ text, voice }) => `${voice ? `Find the voice that best fits "${voice}" with list_voices, then use` : 'Use'} text_to_speech to read the text below aloud and give me the link to the audio.\n\n${text ?? ''}`,
    },
    {
      name: 'find_voice',
      title: 'Find a voice',
      description: 'Finds voices that fit a description.',
      arguments: [arg('description', 'How the voice should sound: gender, region, character', true)],
      text: ({ description }) => `Use list_voices with search "${description ?? ''}" and recommend the best voice for me, saying why. If no voice has every quality, say which ones are missing.`,
    },
    {
      name: 'check_balance',
      title: 'Check my balance',
      description: 'Tokens left and when the caps reset.',
      arguments: [],
      text: () => 'Call get_token_balance and tell me how many tokens I can spend now, in total, and when my daily or weekly cap resets.',
    },
  ];
  if (audiobooks) {
    list.splice(2, 0, {
      name: 'make_audiobook',
      title: 'Make an audiobook',
      description: 'Turns a text into an audiobook with a narrator and character voices.',
      arguments: [arg('title', 'The book title', true), arg('text', 'The text of the book or its first chapter', true), arg('narrator', 'Narrator voice, or how it should sound')],
      text: ({ title, text, narrator }) => `Make an audiobook titled "${title ?? ''}". Pick a narrator${narrator ? ` that fits "${narrator}"` : ''} with list_voices; ` +
        'give characters who speak their own voices. Create it with create_audiobook, split the text into chapters and add each with add_audiobook_chapter ' +
        '(dialogue lines as segments with the speaker), tell me what it will cost, and start it with start_audiobook once I agree. Then follow it with get_audiobook.' +
        `\n\n${text ?? ''}`,
    });
  }
  return list;
}
