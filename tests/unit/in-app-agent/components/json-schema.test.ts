// The panel's JSON Schema validator, run against the schemas the product's tools really announce
// (the MCP registry's `toolInputJsonSchema`, i.e. what `tools/list` carries) and against the
// keywords of the subset it supports.
import { describe, expect, it } from 'vitest';
import { formatFieldError, validateJsonSchema, type JsonSchema } from '@/features/in-app-agent/components/json-schema';
import { MCP_TOOLS, TOOL_NAMES, toolInputJsonSchema } from '@/features/mcp/registry';

const schema = (name: Parameters<typeof toolInputJsonSchema>[0]) => toolInputJsonSchema(name) as JsonSchema;
const messages = (s: JsonSchema, v: unknown) => validateJsonSchema(s, v).map(formatFieldError);

describe('validateJsonSchema on the real tool schemas', () => {
  it('accepts what the tools accept', () => {
    expect(messages(schema('create_issue'), { title: 'Fix login', priority: 'HIGH', labels: ['bug'] })).toEqual([]);
    expect(messages(schema('assign_issue'), { number: 3, assignee: null })).toEqual([]);
    expect(messages(schema('assign_issue'), { number: 3, assignee: 'ann@example.com' })).toEqual([]);
    expect(messages(schema('list_issues'), {})).toEqual([]); // defaults are not required
  });

  it('names each field with a problem, in plain words', () => {
    expect(
      messages(schema('create_issue'), {
        title: 'x'.repeat(201),
        priority: 'CRITICAL',
        labels: ['ok', ''],
        colour: 'red',
      }),
    ).toEqual([
      'title: at most 200 characters (it has 201)',
      'priority: must be one of "LOW", "MEDIUM", "HIGH", "URGENT"',
      'labels[1]: cannot be empty',
      'colour: is not an argument of this tool (it takes title, body, priority, assignee, labels)',
    ]);
    expect(messages(schema('create_issue'), { body: 'no title' })).toEqual(['title: is required']);
    expect(messages(schema('close_issue'), { number: 1.5 })).toEqual(['number: must be a whole number (not 1.5)']);
    expect(messages(schema('close_issue'), { number: '3' })).toEqual(['number: must be a whole number']);
    expect(messages(schema('close_issue'), { number: 0 })).toEqual(['number: must be at least 1']);
    expect(messages(schema('list_issues'), { pageSize: 51 })).toEqual(['pageSize: must be at most 50']);
    expect(messages(schema('create_issue'), { title: 'a', labels: Array(11).fill('x') })).toEqual([
      'labels: at most 10 items (it has 11)',
    ]);
    expect(messages(schema('create_issue'), { title: 'a', labels: 'bug' })).toEqual(['labels: must be a list']);
    expect(messages(schema('notify_webhook'), { message: '' })).toEqual(['message: cannot be empty']);
  });

  it('reports the branch a nullable value was meant for', () => {
    expect(messages(schema('assign_issue'), { number: 1, assignee: '' })).toEqual(['assignee: cannot be empty']);
    expect(messages(schema('assign_issue'), { number: 1, assignee: 5 })).toEqual(['assignee: must be text or null']);
  });

  it('agrees with the tools’ own zod schemas on accept/reject for a sample of inputs', () => {
    const samples: unknown[] = [
      {},
      { number: 1 },
      { number: -1 },
      { number: 2.5 },
      { title: 'T' },
      { title: '' },
      { title: 'T', extra: true },
      { number: 3, assignee: null },
      { number: 3, body: 'hello' },
      { message: 'hi' },
      { query: 'login', limit: 10 },
      { query: 'login', limit: 0 },
      { status: 'OPEN' },
      { status: 'open' },
      { title: 'T', labels: ['a', 'b'] },
      { number: 1, labels: ['x'.repeat(51)] },
    ];
    for (const name of TOOL_NAMES) {
      for (const v of samples) {
        const zodOk = MCP_TOOLS[name].inputSchema.safeParse(v).success;
        const ours = validateJsonSchema(schema(name), v).length === 0;
        expect(ours, `${name} ${JSON.stringify(v)}`).toBe(zodOk);
      }
    }
  });
});

describe('validateJsonSchema keywords', () => {
  it('handles type lists, const, exclusive bounds, multipleOf, uniqueItems, pattern and local refs', () => {
    const s: JsonSchema = {
      type: 'object',
      $defs: { Tag: { type: 'string', pattern: '^[a-z]+$' } },
      properties: {
        a: { type: ['string', 'null'] },
        b: { const: 'fixed' },
        c: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        d: { type: 'number', multipleOf: 0.5 },
        e: { type: 'array', uniqueItems: true, items: { $ref: '#/$defs/Tag' } },
        f: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    };
    expect(messages(s, { a: null, b: 'fixed', c: 0.5, d: 1.5, e: ['x', 'y'], f: { n: 1 } })).toEqual([]);
    expect(messages(s, { a: 1, b: 'other', c: 1, d: 0.3, e: ['x', 'x', 'Y'], f: { n: 'no' } })).toEqual([
      'a: must be text or null',
      'b: must be "fixed"',
      'c: must be less than 1',
      'd: must be a multiple of 0.5',
      'e[1]: repeats "x"',
      'e[2]: has an invalid format',
      'f.n: must be a whole number',
    ]);
  });

  it('counts characters as people do and ignores what it does not know', () => {
    expect(messages({ type: 'string', maxLength: 2 }, '👍👍')).toEqual([]);
    expect(messages({ type: 'string', format: 'email', 'x-unknown': true }, 'not an email')).toEqual([]);
    expect(messages({ oneOf: [{ type: 'integer' }, { type: 'number' }] }, 3)).toEqual([
      'matches more than one allowed shape',
    ]);
    expect(validateJsonSchema(undefined, { anything: true })).toEqual([]);
    expect(messages({ type: 'object' }, [])).toEqual(['must be an object']);
  });

  it('caps the number of messages', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 1]));
    expect(validateJsonSchema({ type: 'object', properties: {}, additionalProperties: false }, many)).toHaveLength(20);
  });
});
