/**
 * A small JSON Schema validator for the subset the product's tools announce (zod's
 * `toJSONSchema` output, as MCP `tools/list` carries it and approval interrupts forward it): `type`
 * (one or a list), `enum`, `const`, `anyOf`/`oneOf`/`allOf`, `properties`, `required`,
 * `additionalProperties`, string `minLength`/`maxLength`/`pattern`, number `minimum`/`maximum`/
 * `exclusiveMinimum`/`exclusiveMaximum`/`multipleOf`, array `items`/`minItems`/`maxItems`/
 * `uniqueItems`, and local `$ref`s (`#/$defs/…`, `#/definitions/…`). Unknown keywords are ignored,
 * so a richer schema never blocks the user here: the server validates again and has the last word.
 *
 * Messages are per field and written for people ("title: at most 200 characters (it has 214)").
 * Pure, no dependencies, so it runs in the panel and in unit tests alike. A library validator that
 * needs no code generation (`@cfworker/json-schema` 4.1.6) was measured in its place: it added
 * 21.9 KB (6.1 KB gzipped) to the panel's chunk and still needed a layer as long as this file to
 * word its findings for people (its messages are for developers), so this one stays.
 */

export type JsonSchema = Record<string, unknown>;

export interface FieldError {
  /** Where the problem is: `title`, `labels[2]`, or `` for the arguments as a whole. */
  path: string;
  message: string;
}

const MAX_ERRORS = 20;
const MAX_DEPTH = 32;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The JSON type of a value, with `integer` for whole numbers. */
function jsonType(v: unknown): 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object' | 'other' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'object':
      return 'object';
    default:
      return 'other';
  }
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
  array: 'a list',
  object: 'an object',
};

function typeMatches(want: string, v: unknown): boolean {
  const t = jsonType(v);
  if (want === 'number') return t === 'number' || t === 'integer';
  return t === want;
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
  return s.length > 40 ? `${s.slice(0, 39)}…` : s;
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  return path ? `${path}.${safe}` : safe;
}

/** Characters as people count them (code points, so an emoji is one). */
function length(s: string): number {
  return Array.from(s).length;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (ref === '#') return root;
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1]!];
  const name = decodeURIComponent(m[2]!).replace(/~1/g, '/').replace(/~0/g, '~');
  const found = isObject(defs) ? defs[name] : undefined;
  return isObject(found) ? found : undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  return ak.length === Object.keys(bo).length && ak.every((k) => Object.hasOwn(bo, k) && sameJson(ao[k], bo[k]));
}

class Validator {
  readonly errors: FieldError[] = [];
  constructor(private readonly root: JsonSchema) {}

  private add(path: string, message: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push({ path, message });
  }

  /** Validates `v` against `schema`, appending errors; returns whether it passed. */
  check(schema: unknown, v: unknown, path: string, depth = 0): boolean {
    if (schema === true || schema === undefined) return true;
    if (schema === false) {
      this.add(path, 'is not allowed');
      return false;
    }
    if (!isObject(schema) || depth > MAX_DEPTH) return true;
    const before = this.errors.length;

    if (typeof schema.$ref === 'string') {
      const target = resolveRef(this.root, schema.$ref);
      if (target) this.check(target, v, path, depth + 1);
    }

    // Types first: when the type is wrong, the other keywords only add noise.
    const types =
      typeof schema.type === 'string'
        ? [schema.type]
        : Array.isArray(schema.type)
          ? schema.type.filter((t): t is string => typeof t === 'string')
          : [];
    if (types.length && !types.some((t) => typeMatches(t, v))) {
      const t = jsonType(v);
      const isWrongInteger = types.includes('integer') && t === 'number';
      this.add(
        path,
        isWrongInteger
          ? `must be a whole number (not ${show(v)})`
          : `must be ${types.map((x) => TYPE_WORDS[x] ?? x).join(' or ')}`,
      );
      return false;
    }

    if (Array.isArray(schema.enum) && !schema.enum.some((e) => sameJson(e, v))) {
      const options = schema.enum.map((e) => show(e));
      this.add(path, options.length === 1 ? `must be ${options[0]}` : `must be one of ${options.join(', ')}`);
    }
    if ('const' in schema && !sameJson(schema.const, v)) this.add(path, `must be ${show(schema.const)}`);

    this.combinators(schema, v, path, depth);

    if (typeof v === 'string') this.string(schema, v, path);
    else if (typeof v === 'number') this.number(schema, v, path);
    else if (Array.isArray(v)) this.array(schema, v, path, depth);
    else if (isObject(v)) this.object(schema, v, path, depth);

    return this.errors.length === before;
  }

  private combinators(schema: JsonSchema, v: unknown, path: string, depth: number): void {
    if (Array.isArray(schema.allOf)) for (const s of schema.allOf) this.check(s, v, path, depth + 1);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = schema[key];
      if (!Array.isArray(branches) || branches.length === 0) continue;
      const results = branches.map((b) => {
        const sub = new Validator(this.root);
        sub.check(b, v, path, depth + 1);
        return { schema: b, errors: sub.errors };
      });
      const passing = results.filter((r) => r.errors.length === 0).length;
      if (key === 'anyOf' ? passing >= 1 : passing === 1) continue;
      if (key === 'oneOf' && passing > 1) {
        this.add(path, 'matches more than one allowed shape');
        continue;
      }
      // Report the branch the value was meant for (its type matches), else list the types.
      const meant = results.find((r) => {
        const t = isObject(r.schema) ? r.schema.type : undefined;
        return typeof t === 'string'
          ? typeMatches(t, v)
          : Array.isArray(t) && t.some((x) => typeof x === 'string' && typeMatches(x, v));
      });
      if (meant) for (const e of meant.errors) this.add(e.path, e.message);
      else {
        const words = branches
          .map((b) => (isObject(b) && typeof b.type === 'string' ? (TYPE_WORDS[b.type] ?? b.type) : null))
          .filter((w): w is string => w !== null);
        this.add(
          path,
          words.length === branches.length
            ? `must be ${[...new Set(words)].join(' or ')}`
            : 'does not match any allowed shape',
        );
      }
    }
  }

  private string(schema: JsonSchema, v: string, path: string): void {
    const n = length(v);
    if (typeof schema.minLength === 'number' && n < schema.minLength) {
      this.add(
        path,
        schema.minLength === 1 ? 'cannot be empty' : `at least ${plural(schema.minLength, 'character')} (it has ${n})`,
      );
    }
    if (typeof schema.maxLength === 'number' && n > schema.maxLength)
      this.add(path, `at most ${plural(schema.maxLength, 'character')} (it has ${n})`);
    if (typeof schema.pattern === 'string') {
      let re: RegExp | null = null;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = null; // a pattern this engine cannot read: leave it to the server
      }
      if (re && !re.test(v)) this.add(path, 'has an invalid format');
    }
  }

  private number(schema: JsonSchema, v: number, path: string): void {
    if (!Number.isFinite(v)) {
      this.add(path, 'must be a finite number');
      return;
    }
    if (typeof schema.minimum === 'number' && v < schema.minimum) this.add(path, `must be at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && v > schema.maximum) this.add(path, `must be at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && v <= schema.exclusiveMinimum)
      this.add(path, `must be greater than ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && v >= schema.exclusiveMaximum)
      this.add(path, `must be less than ${schema.exclusiveMaximum}`);
    if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
      const q = v / schema.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) this.add(path, `must be a multiple of ${schema.multipleOf}`);
    }
  }

  private array(schema: JsonSchema, v: unknown[], path: string, depth: number): void {
    if (typeof schema.minItems === 'number' && v.length < schema.minItems)
      this.add(path, `needs at least ${plural(schema.minItems, 'item')} (it has ${v.length})`);
    if (typeof schema.maxItems === 'number' && v.length > schema.maxItems)
      this.add(path, `at most ${plural(schema.maxItems, 'item')} (it has ${v.length})`);
    if (schema.uniqueItems === true) {
      const dup = v.findIndex((x, i) => v.findIndex((y) => sameJson(x, y)) !== i);
      if (dup >= 0) this.add(join(path, dup), `repeats ${show(v[dup])}`);
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    v.forEach((item, i) => {
      const s = i < prefix.length ? prefix[i] : schema.items;
      if (s !== undefined) this.check(s, item, join(path, i), depth + 1);
    });
  }

  private object(schema: JsonSchema, v: Record<string, unknown>, path: string, depth: number): void {
    const props = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        if (typeof key === 'string' && !Object.hasOwn(v, key)) this.add(join(path, key), 'is required');
      }
    }
    const known = Object.keys(props);
    for (const [key, value] of Object.entries(v)) {
      if (Object.hasOwn(props, key)) {
        this.check(props[key], value, join(path, key), depth + 1);
      } else if (schema.additionalProperties === false) {
        this.add(
          join(path, key),
          known.length
            ? `is not an argument of this tool (it takes ${known.join(', ')})`
            : 'is not an argument of this tool (it takes none)',
        );
      } else if (isObject(schema.additionalProperties)) {
        this.check(schema.additionalProperties, value, join(path, key), depth + 1);
      }
    }
  }
}

/**
 * Checks a value against a JSON Schema; returns the problems (empty when valid), at most 20,
 * in the order of the schema's checks.
 */
export function validateJsonSchema(schema: JsonSchema | undefined, value: unknown): FieldError[] {
  if (!schema) return [];
  const v = new Validator(schema);
  v.check(schema, value, '');
  return v.errors;
}

/** "title: at most 200 characters (it has 214)"; a whole-value problem has no prefix. */
export function formatFieldError(e: FieldError): string {
  return e.path ? `${e.path}: ${e.message}` : e.message;
}
