import type Joi from 'joi';
import { createRequire } from 'node:module';

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/**
 * Meta key for JSON Schema keywords a joi schema cannot state itself,
 * because a custom rule enforces them (an enum checked in `custom()` so
 * that its message can name unsupported values): `.meta({ [SCHEMA_HINT]: {
 * enum: [...] } })`. The converter keeps `x-` keys; they are merged here.
 */
export const SCHEMA_HINT = 'x-json-schema';

/** What joi's `describe()` gives for one schema, as far as the converter below reads it. */
interface JoiSpec {
  type?: string;
  flags?: Record<string, unknown> & { presence?: string; description?: string; only?: boolean; format?: unknown };
  rules?: Array<{ name: string; args?: Record<string, unknown> }>;
  allow?: unknown[];
  invalid?: unknown[];
  whens?: Condition[];
  matches?: Array<Condition & { schema?: JoiSpec }>;
  [key: string]: unknown;
}

interface Condition {
  ref?: { path?: Array<string | number>; type?: string };
  is?: JoiSpec;
  then?: JoiSpec;
  otherwise?: JoiSpec;
  switch?: Array<{ is?: JoiSpec; then?: JoiSpec; otherwise?: JoiSpec }>;
}

/** joi-to-json's OpenAPI 3.1 parser, as far as it is extended here (its own methods, overridden below). */
interface JoiToJsonParser {
  parse(spec: JoiSpec, definitions?: Record<string, unknown>, level?: number): JsonSchema;
  _getPresence(spec: JoiSpec): string | undefined;
  _isRequired(spec: JoiSpec): boolean;
  _setStringFieldProperties(schema: JsonSchema, spec: JoiSpec): void;
  _setDateFieldProperties(schema: JsonSchema, spec: JoiSpec): void;
  _setObjectProperties(schema: JsonSchema, spec: JoiSpec, definitions: Record<string, unknown>, level: number): void;
  _setConditionProperties(schema: JsonSchema, spec: JoiSpec, definitions: Record<string, unknown>, level: number, field: 'whens' | 'matches', logicKeyword?: string): void;
  _addNullTypeIfNullable(schema: JsonSchema, spec: JoiSpec): void;
}

// CommonJS classes without type declarations; the package has no `exports` map, so its parsers can be required directly.
const requireCjs = createRequire(import.meta.url);
const OpenApi31Parser = requireCjs('joi-to-json/lib/parsers/open-api-3.1.js') as new (options?: object) => JoiToJsonParser;

/** The regular-expression flags JSON Schema's `pattern` (ECMA-262, Unicode semantics) can carry: `u` is implied, `d` changes nothing. */
const EXPRESSIBLE_FLAGS = /^[ud]*$/;

/**
 * A joi regex (`/source/flags`, as `describe()` gives it) as a JSON Schema
 * `pattern`: the source alone. A regex whose flags change what it matches
 * (`i`, `m`, `s`, `v`...) or whose source is not a valid pattern with
 * Unicode semantics cannot be stated, and is left out rather than stated
 * wrongly; the description says what the server checks instead.
 */
export function jsonSchemaPattern(regex: string): { pattern: string } | { unstated: string } {
  const match = /^\/([\s\S]*)\/([a-z]*)$/.exec(regex);
  if (!match) return { unstated: regex };
  const [, source, flags] = match as unknown as [string, string, string];
  if (!EXPRESSIBLE_FLAGS.test(flags)) return { unstated: regex };
  try {
    new RegExp(source, 'u');
  } catch {
    return { unstated: regex };
  }
  return { pattern: source };
}

const appendDescription = (schema: JsonSchema, text: string) => {
  const before = typeof schema.description === 'string' ? schema.description.trim() : '';
  schema.description = before ? `${/[.!?]$/.test(before) ? before : `${before}.`} ${text}` : text;
};

/** Sets a keyword, or adds it under `allOf` when the schema already has one of that name. */
function addConstraint(schema: JsonSchema, keyword: string, value: unknown): void {
  if (keyword === 'allOf') schema.allOf = [...((schema.allOf as JsonSchema[] | undefined) ?? []), ...(value as JsonSchema[])];
  else if (schema[keyword] === undefined) schema[keyword] = value;
  else schema.allOf = [...((schema.allOf as JsonSchema[] | undefined) ?? []), { [keyword]: value }];
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Keys of a `describe()` output that constrain a value (anything else is presence, labels, messages). */
const CONSTRAINING_KEYS = ['rules', 'allow', 'invalid', 'whens', 'matches', 'keys', 'items', 'ordered', 'patterns', 'dependencies', 'link'];
const NEUTRAL_FLAGS = new Set(['presence', 'description', 'label', 'error', 'messages', 'default']);

/** A `then`/`otherwise` that only changes whether the field may or must be present (`Joi.forbidden()`, `Joi.required()`). */
function presenceOnly(spec: JoiSpec): boolean {
  if (spec.type !== 'any') return false;
  if (CONSTRAINING_KEYS.some((key) => spec[key] !== undefined)) return false;
  return Object.keys(spec.flags ?? {}).every((flag) => NEUTRAL_FLAGS.has(flag));
}

const isOverride = (value: unknown) => typeof value === 'object' && value !== null && Object.keys(value).length === 1 && (value as { override?: unknown }).override === true;

/** Joi's own default `is` (a truthy value): `Joi.invalid(null, false, 0, '').required()`. */
const TRUTHY = JSON.stringify([null, false, 0, '']);

/**
 * Every schema conversion goes through joi-to-json's OpenAPI 3.1 parser
 * (it reads joi's own `describe()`), with these corrections:
 *
 * - a regex becomes its source only (the parser glued the flags onto it:
 *   `/\S/u` came out as `\S/u`); see `jsonSchemaPattern`;
 * - a condition on another field (`.when('appendTo', ...)`) cannot be
 *   stated in one property's schema (an if/then/else there sees the value,
 *   not its siblings). The parser made it `oneOf` of the branches, where
 *   `Joi.forbidden()` is `not: {}`, so a field allowed in one branch was
 *   documented as allowed in none. The property becomes the union of the
 *   branches (whatever a branch allows is allowed), the condition is said
 *   in its description, it is required only when every branch requires it,
 *   and a condition on a sibling key is stated exactly on the object, as
 *   `allOf: [{ if: { required: ['appendTo'] }, then: ..., else: ... }]`;
 * - `Joi.date().iso()` takes a date as well as a date-time.
 */
class ReferenceParser extends OpenApi31Parser {
  /** `.empty(null)`: null is taken as "not set" (the default applies), so the document must allow it. */
  override _addNullTypeIfNullable(schema: JsonSchema, spec: JoiSpec): void {
    super._addNullTypeIfNullable(schema, spec);
    const empty = spec.flags?.empty as JoiSpec | undefined;
    if (!empty?.allow?.includes(null) || schema.type === undefined) return;
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.includes('null')) schema.type = [...types, 'null'];
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  }

  override _setStringFieldProperties(schema: JsonSchema, spec: JoiSpec): void {
    super._setStringFieldProperties(schema, spec);
    if (schema.type !== 'string') return;
    delete schema.pattern;
    const stated: JsonSchema[] = [];
    for (const rule of spec.rules ?? []) {
      if (rule.name !== 'pattern' || typeof rule.args?.regex !== 'string') continue;
      const invert = Boolean((rule.args.options as { invert?: boolean } | undefined)?.invert);
      const converted = jsonSchemaPattern(rule.args.regex);
      if ('unstated' in converted) {
        appendDescription(schema, `${invert ? 'Must not match' : 'Must match'} the regular expression \`${converted.unstated}\` (its flags cannot be stated as a JSON Schema pattern).`);
      } else {
        stated.push(invert ? { not: { pattern: converted.pattern } } : { pattern: converted.pattern });
      }
    }
    for (const constraint of stated) {
      const [[keyword, value]] = Object.entries(constraint) as [[string, unknown]];
      addConstraint(schema, keyword, value);
    }
  }

  override _setDateFieldProperties(schema: JsonSchema, spec: JoiSpec): void {
    super._setDateFieldProperties(schema, spec);
    if (spec.type === 'date' && schema.type === 'string' && schema.format === 'date-time') {
      // joi's ISO dates take `2026-11-01` as well as `2026-11-01T10:00:00Z`. The pattern keeps to the shapes joi
      // reads (an upper-case T and Z, seconds below 60), which RFC 3339's date-time alone would widen.
      delete schema.format;
      addConstraint(schema, 'anyOf', [{ format: 'date' }, { format: 'date-time' }]);
      schema.pattern = '^\\d{4}-\\d{2}-\\d{2}(?:T\\d{2}:\\d{2}:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-]\\d{2}:\\d{2}))?$';
    }
  }

  override _setObjectProperties(schema: JsonSchema, spec: JoiSpec, definitions: Record<string, unknown>, level: number): void {
    super._setObjectProperties(schema, spec, definitions, level);
    if (schema.type !== 'object') return;
    // A key's condition on a sibling is stated where JSON Schema can see both: on the object, as if/then/else.
    for (const [key, child] of Object.entries((spec.keys ?? {}) as Record<string, JoiSpec>)) {
      for (const condition of child.whens ?? []) {
        const sibling = siblingOf(condition);
        if (sibling === null) continue;
        const cases = condition.switch ?? [{ is: condition.is, then: condition.then, otherwise: condition.otherwise }];
        const stated = this.#ifThenElse(key, sibling, cases, definitions, level);
        if (stated) addConstraint(schema, 'allOf', [stated]);
      }
    }
    // Keys matched by a regex: the parser keyed them by the regex text (`/^x$/i`) in `properties` too, and cut the flags badly.
    const patterns = (spec.patterns as Array<{ regex?: string }> | undefined) ?? [];
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    const byPattern = schema.patternProperties as Record<string, JsonSchema> | undefined;
    if (!properties || !byPattern) return;
    const fixed: Record<string, JsonSchema> = {};
    for (const { regex } of patterns) {
      if (typeof regex !== 'string' || !properties[regex]) continue;
      const rule = properties[regex]!;
      delete properties[regex];
      const converted = jsonSchemaPattern(regex);
      if ('pattern' in converted) fixed[converted.pattern] = rule;
      else if (schema.additionalProperties === false) schema.additionalProperties = rule; // keys it cannot state: at least not refused
    }
    if (Object.keys(fixed).length > 0) schema.patternProperties = fixed;
    else delete schema.patternProperties;
  }

  /** `{ if: <the sibling matches>, then: <the key's branch>, else: ... }`, one nested `else` per further case of a switch. */
  #ifThenElse(key: string, sibling: string, cases: NonNullable<Condition['switch']>, definitions: Record<string, unknown>, level: number): JsonSchema | null {
    const [first, ...rest] = cases;
    if (!first) return null;
    const out: JsonSchema = { if: this.#matches(sibling, first.is, definitions, level) };
    const then = first.then && this.#branch(key, first.then, definitions, level);
    const otherwise = first.otherwise ? this.#branch(key, first.otherwise, definitions, level) : this.#ifThenElse(key, sibling, rest, definitions, level);
    if (then) out.then = then;
    if (otherwise) out.else = otherwise;
    return out.then || out.else ? out : null;
  }

  /** The object whose `sibling` passes joi's `is` (which sees `undefined` when the sibling is absent). */
  #matches(sibling: string, is: JoiSpec | undefined, definitions: Record<string, unknown>, level: number): JsonSchema {
    return is ? this.#branch(sibling, is, definitions, level) ?? {} : { required: [sibling] };
  }

  /** What `spec` demands of the object's `key`: absent, present, and its value (null: nothing). */
  #branch(key: string, spec: JoiSpec, definitions: Record<string, unknown>, level: number): JsonSchema | null {
    const { presence, ...flags } = spec.flags ?? {};
    if (presence === 'forbidden') return { not: { required: [key] } };
    const out: JsonSchema = {};
    if (presence === 'required') out.required = [key];
    if (!presenceOnly(spec)) out.properties = { [key]: this.parse({ ...spec, flags }, definitions, level + 1) };
    return Object.keys(out).length > 0 ? out : null;
  }

  /** Required only when every branch of its conditions on other fields requires it. */
  override _isRequired(spec: JoiSpec): boolean {
    const conditions = (spec.whens ?? []).filter((c) => c.ref);
    if (conditions.length === 0) return super._isRequired(spec);
    const base = this._getPresence(spec);
    return branchesOf(conditions).every((branch) => (branch?.flags?.presence ?? base) === 'required');
  }

  override _setConditionProperties(schema: JsonSchema, spec: JoiSpec, definitions: Record<string, unknown>, level: number, field: 'whens' | 'matches', logicKeyword?: string): void {
    const conditions = spec[field] as Condition[] | undefined;
    if (!conditions?.length || !conditions.some((c) => c.ref)) {
      super._setConditionProperties(schema, spec, definitions, level, field, logicKeyword);
      return;
    }
    // `alternatives().conditional(ref, ...)`: each branch is a whole schema; otherwise a branch refines the field's own.
    const whole = field === 'matches';
    const alternatives: JsonSchema[] = [];
    let unconstrained = false;
    for (const branch of branchesOf(conditions)) {
      if (!branch) {
        // A missing branch leaves a field as declared; a missing alternative matches nothing.
        if (!whole) unconstrained = true;
        continue;
      }
      if (branch.flags?.presence === 'forbidden') continue;
      if (!whole && presenceOnly(branch)) {
        unconstrained = true;
        continue;
      }
      const { presence: _presence, ...flags } = branch.flags ?? {};
      alternatives.push(this.parse({ ...branch, flags }, definitions, level + 1));
    }
    if (!unconstrained) {
      // Deliberate: no branch lets a value through.
      if (alternatives.length === 0) addConstraint(schema, 'not', {});
      else addConstraint(schema, 'anyOf', alternatives);
    }
    appendDescription(schema, describeConditions(conditions));
  }
}

/** The sibling key a condition reads (`.when('appendTo', ...)`), or null for any other reference (a parent's key, context, a path). */
function siblingOf(condition: Condition): string | null {
  const ref = condition.ref as (Condition['ref'] & { ancestor?: number }) | undefined;
  if (!ref || (ref.type !== undefined && ref.type !== 'value') || (ref.ancestor !== undefined && ref.ancestor !== 1)) return null;
  const path = ref.path ?? [];
  return path.length === 1 && typeof path[0] === 'string' ? path[0] : null;
}

/** The `then` and `otherwise` of every condition (undefined: that branch leaves the field as declared). */
function branchesOf(conditions: Condition[]): Array<JoiSpec | undefined> {
  return conditions.flatMap((c) => (c.switch
    ? [...c.switch.map((s) => s.then), c.switch.some((s) => s.otherwise) ? c.switch.find((s) => s.otherwise)!.otherwise : undefined]
    : [c.then, c.otherwise]));
}

function describeIs(is: JoiSpec | undefined): string {
  if (!is) return 'is set';
  const presence = is.flags?.presence;
  const values = (is.allow ?? []).filter((v) => !isOverride(v));
  if (presence === 'forbidden') return 'is absent';
  if (is.flags?.only && values.length > 0) {
    const listed = values.map((v) => `\`${JSON.stringify(v)}\``);
    return listed.length === 1 ? `is ${listed[0]}` : `is one of ${listed.join(', ')}`;
  }
  if (JSON.stringify(is.invalid ?? []) === TRUTHY) return 'is set (not null, false, 0 or empty)';
  if (is.type === 'any' && presence === 'required' && !is.rules && !is.invalid && !is.allow) return 'is present';
  return `matches \`${JSON.stringify(new ReferenceParser().parse(is))}\``;
}

function describeBranch(branch: JoiSpec | undefined): string | null {
  if (!branch) return null;
  const presence = branch.flags?.presence;
  const said = presence === 'forbidden' ? 'not allowed' : presence === 'required' ? 'required' : presence === 'optional' ? 'optional' : null;
  if (presenceOnly(branch)) return said;
  return said ? `${said} and restricted as \`anyOf\` states` : 'restricted as `anyOf` states';
}

/** "Not allowed when `appendTo` is present; required otherwise." */
function describeConditions(conditions: Condition[]): string {
  const sentences: string[] = [];
  for (const c of conditions) {
    const on = `\`${(c.ref?.path ?? []).join('.') || 'the value'}\``;
    const cases = c.switch ?? [{ is: c.is, then: c.then, otherwise: c.otherwise }];
    const parts: string[] = [];
    for (const s of cases) {
      const then = describeBranch(s.then);
      const otherwise = describeBranch(s.otherwise);
      if (then) parts.push(`${then} when ${on} ${describeIs(s.is)}`);
      if (otherwise) parts.push(then ? `${otherwise} otherwise` : `${otherwise} unless ${on} ${describeIs(s.is)}`);
    }
    if (parts.length > 0) sentences.push(`${capitalise(parts.join('; '))}.`);
  }
  return sentences.join(' ');
}

function mergeHints(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(mergeHints);
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key !== SCHEMA_HINT) out[key] = mergeHints(value);
  }
  const hint = (node as JsonSchema)[SCHEMA_HINT];
  if (hint && typeof hint === 'object') Object.assign(out, hint);
  // A hinted enum on a field that takes null ("not set") still lists null.
  if (hint && Array.isArray(out.type) && out.type.includes('null') && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/**
 * A default that its own schema refuses is dropped: `Joi.object({ file:
 * Joi.required() }).default({})` is joi's value when the whole object is
 * absent, not one a client could send.
 */
function dropImpossibleDefaults(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(dropImpossibleDefaults);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as JsonSchema;
  const value = schema.default;
  if (value && typeof value === 'object' && !Array.isArray(value) && Array.isArray(schema.required)
    && (schema.required as string[]).some((key) => !Object.hasOwn(value, key))) {
    delete schema.default;
  }
  for (const child of Object.values(schema)) dropImpossibleDefaults(child);
}

/**
 * The JSON Schema of a joi schema: joi-to-json's OpenAPI 3.1 output (it
 * reads joi's own `describe()`, so the reference says what the server
 * validates) with the corrections of `ReferenceParser`, plus the hints above.
 */
export function toJsonSchema(schema: Joi.Schema): JsonSchema {
  const converted = mergeHints(new ReferenceParser().parse(schema.describe() as unknown as JoiSpec)) as JsonSchema;
  dropImpossibleDefaults(converted);
  return converted;
}
