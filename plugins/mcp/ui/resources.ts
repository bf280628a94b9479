import { playerHtml } from './player.ts';
import { audiobookHtml } from './audiobook.ts';
import { capabilitiesHtml } from './capabilities.ts';

/** The MCP Apps views this server offers (`text/html;profile=mcp-app`), by URI. */
export const PLAYER_URI = 'ui://vieneu/player.html';
export const AUDIOBOOK_URI = 'ui://vieneu/audiobook.html';
export const CAPABILITIES_URI = 'ui://vieneu/capabilities.html';
export const MCP_APP_MIME = 'text/html;profile=mcp-app';

export interface UiResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  html: string;
}

export function uiResources(): UiResource[] {
  return [
    { uri: PLAYER_URI, name: 'player', title: 'Speech player', description: 'Plays the audio text_to_speech made and follows a job until its link exists.', html: playerHtml },
    { uri: AUDIOBOOK_URI, name: 'audiobook', title: 'Audiobook progress', description: 'A book\'s progress chapter by chapter, with players for finished chapters.', html: audiobookHtml },
    { uri: CAPABILITIES_URI, name: 'capabilities', title: 'Capabilities', description: 'What this server offers, its engines and prices.', html: capabilitiesHtml },
  ];
}
