import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * The JSON-RPC envelope of a 2025-era request, checked before the SDK's
 * transport sees it. The SDK answers an empty batch `[]` with 202 and no
 * body, a JSON value that is not a message (`{"foo":1}`, `"jsonrpc":
 * "1.0"`, `"id": null`) with -32700 Parse error, and takes batches under
 * any revision. JSON-RPC 2.0 answers the first two with -32600 Invalid
 * Request, and batches exist in revision 2025-03-26 only (2025-06-18
 * removed them). What passes is exactly what the SDK accepts.
 */

const INVALID_REQUEST = -32600;
/** the first revision without JSON-RPC batches (revision names sort as dates) */
const FIRST_WITHOUT_BATCHES = '2025-06-18';

export interface EnvelopeRefusal {
  status: number;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };
}

const isMessage = (value: unknown) => JSONRPCMessageSchema.safeParse(value).success;

function invalid(message: string, id: unknown = null): EnvelopeRefusal {
  // The request's id when it is one JSON-RPC allows, null otherwise.
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
  return { status: 400, body: { jsonrpc: '2.0', id: validId, error: { code: INVALID_REQUEST, message: `Invalid Request: ${message}` } } };
}

/** The batch's revision: its header, or (the header comes after initialize) the version its initialize asks for. */
function batchVersion(batch: unknown[], header: string | undefined): unknown {
  if (header) return header;
  const initialize = batch.find((m) => (m as { method?: unknown } | null)?.method === 'initialize') as { params?: { protocolVersion?: unknown } } | undefined;
  return initialize?.params?.protocolVersion;
}

export function envelopeRefusal(body: unknown, protocolHeader: string | undefined): EnvelopeRefusal | null {
  if (!Array.isArray(body)) {
    if (isMessage(body)) return null;
    const id = body && typeof body === 'object' ? (body as { id?: unknown }).id : null;
    return invalid('the body must be one JSON-RPC 2.0 message: "jsonrpc": "2.0", a "method" (with an "id" that is a string or an integer for a request), or a response.', id);
  }
  if (body.length === 0) return invalid('the batch is empty.');
  const version = batchVersion(body, protocolHeader);
  if (typeof version === 'string' && version >= FIRST_WITHOUT_BATCHES) {
    return invalid(`batches are for protocol revision 2025-03-26 only; under ${version} send one message per request.`);
  }
  const bad = body.findIndex((m) => !isMessage(m));
  if (bad >= 0) return invalid(`batch member ${bad} is not a JSON-RPC 2.0 message; nothing in the batch was run.`);
  return null;
}
