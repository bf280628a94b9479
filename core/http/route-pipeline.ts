import type Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Config } from '../../config/load.ts';
import type { RouteDefinition, RouteContext, RouteInput } from '../plugin.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Observe } from '../bound-histogram.ts';
import type { Bus } from '../ports/bus.ts';
import type { SpillStore } from '../ports/documents.ts';
import { publishOrSpill } from '../bus-spill.ts';
import type { Counters } from '../ports/counters.ts';
import type { BillingService, Charge, RequestBilling } from '../billing/service.ts';
import { ApiError } from '../errors.ts';
import { readPresentedKey, type KeyAuthenticator } from './auth.ts';
import { enforceRateLimit } from './rate-limit.ts';
import { sendError, toApiError } from './envelopes.ts';
import { buildOutcomeEvent, CLIENT_CLOSED_REQUEST, newOutcome } from './outcome.ts';
import { validate } from './validate.ts';
import { TOPICS } from '../ports/bus.ts';
import type { Drain } from './drain.ts';
import type { EdgeGate } from './edge/edge-limits.ts';
import { holdUserStream } from './edge/user-streams.ts';
import { discardUploads } from './uploads.ts';
import { bodyReadRefusal, requireJsonBody } from './body-read.ts';

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** What core's request phases use. */
export interface PipelineServices {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  keys: KeyAuthenticator;
  counters: Counters;
  billing: BillingService;
  bus: Bus;
  /** where outcome events the bus refused wait for the spill relay */
  spill: SpillStore;
}

/** Runs `fn` once the response has fully ended (streamed bodies included). */
function onResponseEnd(res: Koa.Context['res'], fn: () => void): void {
  if (res.writableFinished || res.destroyed) setImmediate(fn);
  else res.once('close', fn);
}

function bodyParser(def: RouteDefinition): Koa.Middleware | null {
  if (def.method === 'GET' || def.method === 'DELETE' || def.body === 'none') return null;
  if (def.body === 'multipart') {
    return koaBody({
      multipart: true,
      urlencoded: true,
      json: false,
      // Files stream to disk and are refused the moment they pass the limit; text fields stay small.
      formidable: {
        maxFileSize: MAX_UPLOAD_BYTES, maxFiles: 1, allowEmptyFiles: false, maxFieldsSize: MAX_FORM_FIELDS_BYTES,
        // formidable reads a part without a Content-Type as a text field, filename or not; Python's requests sends
        // files that way. A part that names a file is a file (RFC 7578 4.4: its type defaults to octet-stream),
        // and one with an empty filename is a file input left empty: no file at all, rather than a text field.
        onPart: (part, handlePart) => {
          if (!part.mimetype && typeof part.originalFilename === 'string') {
            // formidable emits a part's data whether or not anyone listens: one not handed on is dropped.
            if (part.originalFilename === '') return;
            part.mimetype = 'application/octet-stream';
          }
          handlePart(part);
        },
      },
      onError: (err) => {
        throw multipartError(err as Error & { code?: unknown; httpCode?: unknown });
      },
    });
  }
  return koaBody({ json: true, urlencoded: false, text: false, jsonLimit: def.jsonLimit ?? '1mb', jsonStrict: true });
}

/** Form fields besides the file (a voice id, a flag): held in memory, so kept small. */
export const MAX_FORM_FIELDS_BYTES = 64 * 1024;

/** formidable's refusals (their `code` numbers are formidable's FormidableError codes) as the API's errors. */
function multipartError(err: Error & { code?: unknown; httpCode?: unknown }): ApiError {
  switch (err.code) {
    case 1009: // biggerThanTotalMaxFileSize: raised while the upload streams
    case 1016: // biggerThanMaxFileSize
      return new ApiError(413, 'Uploaded file is larger than 10 MB.', { code: 'PAYLOAD_TOO_LARGE' });
    case 1006: // maxFieldsSizeExceeded
      return new ApiError(413, `The form fields are larger than ${MAX_FORM_FIELDS_BYTES / 1024} KB.`, { code: 'PAYLOAD_TOO_LARGE' });
    case 1010: // noEmptyFiles
      return new ApiError(400, 'The uploaded file is empty.', { code: 'EMPTY_FILE' });
    case 1015: // maxFilesExceeded
      return new ApiError(400, 'Send one file per request.', { code: 'TOO_MANY_FILES' });
    default:
      return new ApiError(400, `Could not read the multipart form: ${err.message}`, { code: 'INVALID_MULTIPART' });
  }
}

/** The route's `request` schemas, applied after parsing: typed values for the handler, or one 400 naming every field. */
function validatedInput(def: RouteDefinition, ctx: RouteContext): RouteInput<unknown, unknown> {
  const schemas = def.request ?? {};
  return {
    body: schemas.body ? validate(schemas.body, ctx.request.body) : ctx.request.body,
    query: schemas.query ? validate(schemas.query, ctx.query) : ctx.query,
    params: schemas.params ? validate(schemas.params, ctx.params) as Record<string, string> : ctx.params,
  };
}

/**
 * Core's request phases around one plugin route, in order: outcome (log
 * phase, published after the response ends), the stream route's own edge
 * limits, error boundary (route's own envelope), authentication, rate limit,
 * open streams per signed-in person, body parsing, validation, handler.
 */
export function routePipeline(def: RouteDefinition, services: PipelineServices, drain: Drain, streamEdge: EdgeGate | null = null): Koa.Middleware {
  const parse = bodyParser(def);
  const envelope = def.envelope ?? 'native';
  const perMinute = def.perMinute;
  // SPEC Limits: 300/min speech routes, 20/min dialogue, 10/min dub and srt (configurable for tests).
  const rateLimit = def.rateClass ? services.config.limits.ratePerMinute[def.rateClass] : null;
  const durations = durationSeries(services.metrics, def);

  return async (koaCtx) => {
    const ctx = koaCtx as unknown as RouteContext;
    const state = ctx.state;
    const outcome = newOutcome(def.name, def.tracked ?? false);
    state.outcome = outcome;
    state.auth = null;
    const held: Charge[] = [];
    const tally = newTally();
    state.billing = requestBilling(ctx, services, held, tally);
    let errorCode: string | null = null;

    // The log phase runs once the response has ended AND the route's own work is done: a client that
    // resets mid-request must not publish an outcome before the handler has charged or refused it.
    let handlerFinished = false;
    const waiting: { resume?: () => void } = {};
    const record = () => {
      const publication = recordOutcome(ctx, services, def, durations, errorCode, tally);
      if (publication) drain.hold(publication);
      if (held.length > 0) drain.hold(releaseHolds(ctx, services, held, publication));
      if (outcome.afterPublished.length > 0) drain.hold(runAfterPublished(ctx, services, publication));
    };
    onResponseEnd(ctx.res, () => {
      if (handlerFinished) return record();
      // The client left first: shutdown waits for the handler too.
      drain.hold(new Promise<void>((resolve) => (waiting.resume = resolve)).then(record));
    });

    try {
      await handle();
    } finally {
      handlerFinished = true;
      waiting.resume?.();
    }

    // Core's phases and the handler; any refusal goes out in the route's own envelope.
    async function handle(): Promise<void> {
      if (streamEdge && !(await streamEdge(ctx as unknown as Koa.Context))) {
        outcome.skip = true;
        return;
      }
      try {
        if (def.auth !== 'none') {
          const key = readPresentedKey(ctx.req.headersDistinct, def.extraKeyHeader);
          if (key) state.auth = await services.keys.authenticate(key);
          else if (def.auth === 'required') throw new ApiError(401, missingKeyMessage(def.extraKeyHeader));
        }
        if (state.auth && (rateLimit !== null || perMinute)) {
          try {
            const bucket = rateLimit !== null ? `rate:${def.rateClass}` : `op:${def.name}`;
            const limited = await enforceRateLimit(services.counters.rateLimiter, bucket, state.auth.keyId, rateLimit ?? perMinute!);
            for (const [name, value] of Object.entries(limited.headers)) ctx.set(name, value);
          } catch (err) {
            outcome.skip = true;
            throw err;
          }
        }
        if (def.stream && state.auth?.userId) {
          const held = await holdUserStream(services.counters.slots, state.auth.userId, services.config.limits.streamsPerUser);
          onResponseEnd(ctx.res, () => void held.release().catch((err: unknown) => services.logger.warn('a user stream slot was not released; it expires', { err: err as Error })));
        }
        if (parse) {
          if (def.body !== 'multipart') requireJsonBody(ctx);
          await parse(ctx as unknown as Koa.Context, async () => {}).catch((err: unknown) => {
            throw bodyReadRefusal(err, ctx.req);
          });
          // Strict JSON parsing lets an array through; it is refused as `null` or `5` are (README: INVALID_JSON), not field by field.
          if (def.body !== 'multipart' && Array.isArray(ctx.request.body)) {
            throw new ApiError(400, 'The request body must be a JSON object.', { code: 'INVALID_JSON' });
          }
        }
        try {
          await def.handler(ctx, validatedInput(def, ctx));
        } finally {
          // The upload's temporary files were core's doing: they go once the handler is done with them, however it ended.
          if (def.body === 'multipart') await discardUploads(ctx);
        }
      } catch (err) {
        const apiError = toApiError(err, services.logger);
        errorCode = apiError.fields.usageCode ?? null;
        // A client that left is charged as a disconnect (SPEC Billing rule 3); any other refusal or failure it is told of is not billed.
        if (apiError.status !== CLIENT_CLOSED_REQUEST) await refundUnsettled(ctx, services, def, held, tally);
        sendError(ctx as unknown as Koa.Context, apiError, envelope, state.requestId);
      }
    }
  };
}

/** What the request's billing actually moved: the outcome event reports these, whatever a route annotated. */
interface BillingTally {
  charged: number;
  refunded: number;
  /** charges with a refund applied (whole or part) */
  refundedCharges: Set<string>;
}

const newTally = (): BillingTally => ({ charged: 0, refunded: 0, refundedCharges: new Set() });

/**
 * Charges of the request, recorded on its outcome. A charge is held under
 * this process until the log phase (releaseHolds), so that a crash before
 * the request settles gets it refunded (core/billing/hold-recovery.ts); one
 * applied by the route's own writer (`POST /tts`, with its job) is settled
 * by that record instead.
 */
function requestBilling(ctx: RouteContext, services: PipelineServices, held: Charge[], tally: BillingTally): RequestBilling {
  return {
    async charge({ engine, tokens, write, grants }) {
      const auth = ctx.state.auth;
      if (!auth) throw new ApiError(401, 'An API key is required.');
      const hold = write === undefined;
      const charge = await services.billing.charge({
        payer: { accountId: auth.accountId, keyId: auth.keyId, grantId: auth.grantId },
        engine, tokens, route: ctx.state.outcome.route, requestId: ctx.state.requestId, write, grants, hold,
      });
      if (hold) held.push(charge);
      tally.charged += charge.tokens;
      ctx.state.outcome.tokensCharged += charge.tokens;
      ctx.state.outcome.grantId = charge.grantId;
      return charge;
    },
    async refund(charge, tokens) {
      const amount = Math.min(tokens ?? charge.tokens, charge.tokens);
      if (await services.billing.refund(charge, amount)) {
        tally.refunded += amount;
        tally.refundedCharges.add(charge.id);
        ctx.state.outcome.tokensRefunded += amount;
      }
    },
  };
}

/**
 * The route refused or failed after charging and gave nothing back: core
 * refunds its held charges (SPEC Billing rule 3: a refusal is not billed; a
 * failure is refunded), so a plugin that prices first and checks after, or
 * throws by mistake, never keeps the money. A charge the route refunded even
 * in part was its decision and stays as it left it. A refund that cannot be
 * made now keeps its hold: the hold recovery refunds it (at the latest when
 * this process stops).
 */
async function refundUnsettled(ctx: RouteContext, services: PipelineServices, def: RouteDefinition, held: Charge[], tally: BillingTally): Promise<void> {
  for (const charge of [...held]) {
    if (tally.refundedCharges.has(charge.id)) continue;
    services.logger.warn('route answered an error after charging; core refunds the charge', { route: def.name, requestId: ctx.state.requestId, tokens: charge.tokens });
    try {
      await ctx.state.billing.refund(charge);
    } catch (err) {
      services.logger.error('could not refund the charge of a failed request; its hold stays for the recovery', { err: err as Error, route: def.name, requestId: ctx.state.requestId });
      held.splice(held.indexOf(charge), 1);
    }
  }
}

/**
 * The request has settled (its refunds included) and its outcome has gone
 * to the bus: its held charges are released. Until then a crash leaves the
 * hold, whose recovery refunds the charge and publishes the outcome in the
 * request's place: a crash loses neither the money nor the usage event.
 */
async function releaseHolds(ctx: RouteContext, services: PipelineServices, held: Charge[], publication: Promise<boolean> | null): Promise<void> {
  await Promise.allSettled(ctx.state.outcome.pending);
  // publishOutcome never rejects: a publish that failed is logged there, and the hold goes anyway (a kept
  // hold would refund a delivered request should this process stop).
  await publication;
  try {
    await services.billing.release(held);
  } catch (err) {
    // Retried with the next release and by the hold recovery's pass; should this process stop first, the charge is refunded.
    services.logger.warn('could not release the held charges of a settled request; will retry', { err: err as Error, requestId: ctx.state.requestId, charges: held.map((c) => c.id) });
  }
}

/**
 * The plugin's work that waits for the outcome event to be durable
 * (`outcome.afterPublished`). After a failed publish it is not done: the
 * durable mark it would clear stays, and its recovery publishes the event.
 */
async function runAfterPublished(ctx: RouteContext, services: PipelineServices, publication: Promise<boolean> | null): Promise<void> {
  if (publication && !(await publication)) return;
  const results = await Promise.allSettled(ctx.state.outcome.afterPublished.map((work) => work()));
  for (const result of results) {
    if (result.status === 'rejected') services.logger.warn('work after an outcome\'s publication failed', { err: result.reason as Error, requestId: ctx.state.requestId });
  }
}

/** Names every header the route takes its key in (X-AGENT-SECRET too, where the route takes it). */
function missingKeyMessage(extraHeader: string | undefined): string {
  const extra = extraHeader ? `, X-API-Key: <API_KEY> or ${extraHeader.toUpperCase()}: <API_KEY>` : ' or X-API-Key: <API_KEY>';
  return `Missing API key. Send Authorization: Bearer <API_KEY>${extra}.`;
}

/** The route's duration series, one per status, each bound on its first use. */
type DurationSeries = (status: number) => Observe;

function durationSeries(metrics: Metrics, def: RouteDefinition): DurationSeries {
  const byStatus = new Map<number, Observe>();
  return (status) => {
    let observe = byStatus.get(status);
    if (!observe) byStatus.set(status, (observe = metrics.httpDuration.bind({ route: def.name, method: def.method, status: String(status) })));
    return observe;
  };
}

/** The status the outcome records: a request the client abandoned before any answer is 499, not whatever Koa defaulted to. */
function recordedStatus(ctx: RouteContext): number {
  const res = ctx.res;
  // A handler that took the response over (streams) decided its status before writing, and may have changed it before the first byte.
  if (ctx.respond === false) return res.headersSent ? res.statusCode : ctx.status;
  if (!res.headersSent && !res.writableFinished) return CLIENT_CLOSED_REQUEST;
  return res.statusCode;
}

/**
 * The request's log phase: its duration metric, then (for tracked routes)
 * its outcome event; the promise is the publication (whether the event is
 * durable: on the bus, or kept for the spill relay when the bus refused
 * it), null when there is none.
 */
function recordOutcome(ctx: RouteContext, services: PipelineServices, def: RouteDefinition, durations: DurationSeries, errorCode: string | null, tally: BillingTally): Promise<boolean> | null {
  const outcome = ctx.state.outcome;
  const status = recordedStatus(ctx);
  durations(status)((performance.now() - ctx.state.startedAt) / 1000);
  // A request that moved money is in usage whether or not its route is tracked: usage must add up to the ledger.
  if ((!outcome.tracked && tally.charged === 0) || outcome.skip) return null;
  settleTokenFigures(ctx, services, def, tally);
  return publishOutcome(ctx, services, def, status, errorCode);
}

/**
 * Usage reports the tokens the request's billing moved. A route that wrote
 * other figures on its outcome (a charge it never made) is logged and
 * overruled, so usage and the ledger agree.
 */
function settleTokenFigures(ctx: RouteContext, services: PipelineServices, def: RouteDefinition, tally: BillingTally): void {
  const outcome = ctx.state.outcome;
  if (outcome.tokensCharged === tally.charged && outcome.tokensRefunded === tally.refunded) return;
  services.logger.warn('route annotated token figures its billing did not move; usage reports the ledger\'s', {
    route: def.name, requestId: ctx.state.requestId, annotated: { charged: outcome.tokensCharged, refunded: outcome.tokensRefunded }, billed: { charged: tally.charged, refunded: tally.refunded },
  });
  outcome.tokensCharged = tally.charged;
  outcome.tokensRefunded = tally.refunded;
}

async function publishOutcome(ctx: RouteContext, services: PipelineServices, def: RouteDefinition, status: number, errorCode: string | null): Promise<boolean> {
  const outcome = ctx.state.outcome;
  try {
    await Promise.allSettled(outcome.pending);
    const auth = ctx.state.auth;
    if (!auth) return true; // a refusal that no account can be charged for belongs to no one's usage
    const event = buildOutcomeEvent({ requestId: ctx.state.requestId, accountId: auth.accountId, keyId: auth.keyId, status, outcome, errorCode });
    await publishOrSpill(services, TOPICS.outcomes, [{ id: event.id, key: auth.accountId, value: event }]);
    return true;
  } catch (err) {
    services.logger.error('could not publish outcome', { err: err as Error, route: def.name });
    return false;
  }
}
