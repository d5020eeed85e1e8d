// The form a question (`ask_user`) may request (MCP elicitation's flat form schema) and the check
// of an answer against it: the one validator the server and the panel's form share.
import { describe, expect, it } from 'vitest';
import {
  answerProblems,
  AskUserInputSchema,
  describeProblems,
  matchesFormat,
  questionResult,
  RequestedSchemaSchema,
  type RequestedSchema,
} from '@/features/in-app-agent/elicitation';

const form = (properties: Record<string, unknown>, required?: string[]) => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});

const firstMessage = (value: unknown) => {
  const parsed = RequestedSchemaSchema.safeParse(value);
  if (parsed.success) return null;
  return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join(' | ');
};

describe('the requested form', () => {
  it('accepts every flat field MCP elicitation defines', () => {
    const schema = form(
      {
        name: { type: 'string', title: 'Name', description: 'Your name', minLength: 1, maxLength: 50, default: 'Ana' },
        email: { type: 'string', format: 'email' },
        site: { type: 'string', format: 'uri' },
        day: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
        age: { type: 'integer', minimum: 0, maximum: 150, default: 30 },
        score: { type: 'number', minimum: 0.5 },
        agree: { type: 'boolean', default: false },
        size: { type: 'string', enum: ['s', 'm', 'l'], enumNames: ['Small', 'Medium', 'Large'], default: 'm' },
      },
      ['name', 'size'],
    );
    expect(firstMessage(schema)).toBeNull();
    expect(AskUserInputSchema.safeParse({ message: 'Tell me', requestedSchema: schema }).success).toBe(true);
  });

  it('refuses nested, list and unsupported fields with a reason the model can act on', () => {
    expect(firstMessage(form({ address: { type: 'object', properties: { city: { type: 'string' } } } }))).toMatch(
      /flat field/,
    );
    expect(firstMessage(form({ tags: { type: 'array', items: { type: 'string' } } }))).toMatch(/flat field/);
    expect(firstMessage(form({ choice: { oneOf: [{ const: 'a' }] } }))).toMatch(/flat field/);
    expect(firstMessage(form({ x: { type: 'string', pattern: '^a' } }))).toMatch(/properties\.x: .*"pattern"/);
    expect(firstMessage(form({ x: { type: 'string', format: 'hostname' } }))).toMatch(/properties\.x\.format/);
    expect(firstMessage(form({ x: { type: 'string', enum: ['a'], maxLength: 3 } }))).toMatch(/takes no minLength/);
    expect(firstMessage(form({ x: { type: 'string', enumNames: ['A'] } }))).toMatch(/enumNames needs enum/);
    expect(firstMessage({ type: 'array', properties: {} })).not.toBeNull();
    expect(firstMessage(form({}))).toMatch(/at least one field/);
    const many = Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`f${i}`, { type: 'boolean' }]));
    expect(firstMessage(form(many))).toMatch(/at most 12 fields/);
    expect(firstMessage(form({ 'not a name': { type: 'boolean' } }))).toMatch(/identifiers/);
  });

  it('refuses a form that contradicts itself', () => {
    expect(firstMessage(form({ a: { type: 'boolean' } }, ['b']))).toMatch(/"b", which is not a property/);
    expect(firstMessage(form({ a: { type: 'boolean' } }, ['a', 'a']))).toMatch(/twice/);
    expect(firstMessage(form({ a: { type: 'string', enum: ['x', 'x'] } }))).toMatch(/twice/);
    expect(firstMessage(form({ a: { type: 'string', enum: ['x', 'y'], enumNames: ['X'] } }))).toMatch(/enumNames/);
    expect(firstMessage(form({ a: { type: 'string', enum: [] } }))).not.toBeNull();
    expect(firstMessage(form({ a: { type: 'integer', minimum: 5, maximum: 1 } }))).toMatch(/minimum is larger/);
    expect(firstMessage(form({ a: { type: 'string', minLength: 5, maxLength: 1 } }))).toMatch(/minLength is larger/);
    // Defaults must be answers the form would accept.
    expect(firstMessage(form({ a: { type: 'string', enum: ['x'], default: 'y' } }))).toMatch(/options/);
    expect(firstMessage(form({ a: { type: 'integer', maximum: 3, default: 4 } }))).toMatch(/3 or less/);
    expect(firstMessage(form({ a: { type: 'string', format: 'email', default: 'nope' } }))).toMatch(/email/);
  });

  it('refuses an empty question or one too long', () => {
    const schema = form({ a: { type: 'boolean' } });
    expect(AskUserInputSchema.safeParse({ message: '  ', requestedSchema: schema }).success).toBe(false);
    expect(AskUserInputSchema.safeParse({ message: 'x'.repeat(2001), requestedSchema: schema }).success).toBe(false);
    expect(AskUserInputSchema.safeParse({ message: 'ok', requestedSchema: schema, extra: 1 }).success).toBe(false);
  });
});

describe('an answer against its form', () => {
  const schema = RequestedSchemaSchema.parse(
    form(
      {
        issue: { type: 'string', title: 'Issue', enum: ['1', '2'] },
        note: { type: 'string', title: 'Note', minLength: 2, maxLength: 5 },
        days: { type: 'integer', title: 'Days', minimum: 1, maximum: 30 },
        ratio: { type: 'number', minimum: 0, maximum: 1 },
        notify: { type: 'boolean', title: 'Notify' },
        email: { type: 'string', format: 'email' },
        site: { type: 'string', format: 'uri' },
        day: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
      },
      ['issue', 'notify'],
    ),
  ) as RequestedSchema;
  const problems = (content: unknown) => answerProblems(schema, content).map((p) => `${p.field}: ${p.message}`);

  it('accepts what fits', () => {
    expect(problems({ issue: '1', notify: false })).toEqual([]);
    expect(
      problems({
        issue: '2',
        notify: true,
        note: 'héllo',
        days: 30,
        ratio: 0.25,
        email: 'a@b.co',
        site: 'https://example.com/x',
        day: '2026-02-28',
        at: '2026-02-28T10:00:00Z',
      }),
    ).toEqual([]);
  });

  it('names each field that does not fit and why', () => {
    expect(problems({})).toEqual(['issue: This is required.', 'notify: This is required.']);
    expect(problems({ issue: '3', notify: 'true' })).toEqual([
      'issue: Choose one of the options.',
      'notify: Choose yes or no.',
    ]);
    expect(problems({ issue: '1', notify: true, note: 'a' })).toEqual([
      'note: Enter at least 2 characters (this has 1).',
    ]);
    expect(problems({ issue: '1', notify: true, note: 'abcdef' })).toEqual([
      'note: Enter at most 5 characters (this has 6).',
    ]);
    expect(problems({ issue: '1', notify: true, days: 0 })).toEqual(['days: Enter 1 or more.']);
    expect(problems({ issue: '1', notify: true, days: 1.5 })).toEqual(['days: Enter a whole number.']);
    expect(problems({ issue: '1', notify: true, days: '3' })).toEqual(['days: Enter a number.']);
    expect(problems({ issue: '1', notify: true, ratio: 2 })).toEqual(['ratio: Enter 1 or less.']);
    expect(problems({ issue: '1', notify: true, email: 'a@b' })).toEqual(['email: Enter an email address.']);
    expect(problems({ issue: '1', notify: true, site: 'example.com' })).toEqual(['site: Enter a web address (URL).']);
    expect(problems({ issue: '1', notify: true, day: '2026-02-30' })).toEqual(['day: Enter a date (YYYY-MM-DD).']);
    expect(problems({ issue: '1', notify: true, at: '2026-02-28 10:00' })).toHaveLength(1);
    expect(problems({ issue: '1', notify: true, surprise: 1 })).toEqual(['surprise: This was not asked for.']);
    expect(problems(['1'])).toEqual([': The answer must be an object of the fields asked for.']);
    expect(problems(null)).toHaveLength(1);
  });

  it('says the problems with the fields as the form labels them', () => {
    expect(describeProblems(schema, answerProblems(schema, { issue: '9' }))).toBe(
      'Issue: Choose one of the options. Notify: This is required.',
    );
  });

  it('checks formats the same way everywhere', () => {
    expect(matchesFormat('email', 'ana@example.com')).toBe(true);
    expect(matchesFormat('email', 'ana @example.com')).toBe(false);
    expect(matchesFormat('uri', 'mailto:ana@example.com')).toBe(true);
    expect(matchesFormat('uri', '/relative')).toBe(false);
    expect(matchesFormat('date', '2024-02-29')).toBe(true);
    expect(matchesFormat('date', '2023-02-29')).toBe(false);
    expect(matchesFormat('date-time', '2024-02-29T23:59:59.5+02:00')).toBe(true);
    expect(matchesFormat('date-time', '2024-02-29T23:59:59')).toBe(false);
  });
});

describe('the result the model gets', () => {
  it('is the content when accepted, and says not to guess otherwise', () => {
    expect(questionResult({ action: 'accept', content: { a: 1 } })).toEqual({ action: 'accept', content: { a: 1 } });
    expect(questionResult({ action: 'decline' })).toMatchObject({ action: 'decline', message: /declined.*not guess/ });
    expect(questionResult({ action: 'expired' })).toMatchObject({ action: 'expired', message: /did not answer/ });
  });
});
