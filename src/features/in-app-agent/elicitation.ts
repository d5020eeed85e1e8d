/**
 * Questions the assistant asks the user (`ask_user`): the form a question requests, in the flat
 * form schema of MCP elicitation (protocol 2025-06-18: an object of string, number, integer,
 * boolean and enum properties with titles, descriptions, defaults and `required`; string formats
 * `email`, `uri`, `date`, `date-time`; lengths and ranges), the answer (`{action, content?}`, as an
 * MCP elicitation result: accept with the content, or decline), and the check of an answer against
 * its form. One validator for the server (which has the last word) and the panel's form, so the
 * card says exactly what the server would refuse. Isomorphic, zod only.
 */
import { z } from 'zod';

/** Bounds of a question, so a form stays a form (and its answer fits in a tool result). */
const QUESTION_LIMITS = {
  messageChars: 2_000,
  properties: 12,
  titleChars: 200,
  descriptionChars: 1_000,
  enumValues: 50,
  enumValueChars: 200,
  /** A text answer is never longer than this, whatever `maxLength` says. */
  stringChars: 4_000,
} as const;

/** A field name: a plain identifier, so it reads as a label id and a JSON key alike. */
const FIELD_NAME_RULE = 'field names are identifiers: letters, digits and _, at most 64.';
const FieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, FIELD_NAME_RULE);

const common = {
  title: z.string().trim().min(1).max(QUESTION_LIMITS.titleChars).optional(),
  description: z.string().trim().max(QUESTION_LIMITS.descriptionChars).optional(),
};

const Length = z.number().int().min(0).max(QUESTION_LIMITS.stringChars);
const STRING_FORMATS = ['email', 'uri', 'date', 'date-time'] as const;
export type StringFormat = (typeof STRING_FORMATS)[number];

/** Text, or a choice among `enum` values (labelled by `enumNames`). */
const StringProperty = z
  .object({
    type: z.literal('string'),
    ...common,
    minLength: Length.optional(),
    maxLength: Length.optional(),
    format: z.enum(STRING_FORMATS).optional(),
    enum: z
      .array(z.string().min(1).max(QUESTION_LIMITS.enumValueChars))
      .min(1)
      .max(QUESTION_LIMITS.enumValues)
      .optional(),
    /** What each `enum` value is called (same order). */
    enumNames: z.array(z.string().min(1).max(QUESTION_LIMITS.enumValueChars)).optional(),
    default: z.string().max(QUESTION_LIMITS.stringChars).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (p.enum) {
      if (p.minLength !== undefined || p.maxLength !== undefined || p.format)
        issue('A choice (enum) takes no minLength, maxLength or format.');
      if (new Set(p.enum).size !== p.enum.length) issue('enum lists a value twice.');
      if (p.enumNames && p.enumNames.length !== p.enum.length) issue('enumNames must name every enum value, in order.');
    } else if (p.enumNames) issue('enumNames needs enum.');
    if (p.minLength !== undefined && p.maxLength !== undefined && p.minLength > p.maxLength)
      issue('minLength is larger than maxLength.');
  });

const NumberProperty = z
  .object({
    type: z.enum(['number', 'integer']),
    ...common,
    minimum: z.number().finite().optional(),
    maximum: z.number().finite().optional(),
    default: z.number().finite().optional(),
  })
  .strict()
  .refine((p) => p.minimum === undefined || p.maximum === undefined || p.minimum <= p.maximum, {
    message: 'minimum is larger than maximum.',
  });

const BooleanProperty = z.object({ type: z.literal('boolean'), ...common, default: z.boolean().optional() }).strict();

/**
 * One field of the form. Anything else (objects, arrays, `oneOf`, references) is not a flat form
 * and is refused, with the reason, as the tool's error the model can correct.
 */
const QuestionPropertySchema = z.discriminatedUnion('type', [StringProperty, NumberProperty, BooleanProperty], {
  error: (iss) =>
    iss.code === 'invalid_union'
      ? 'Each property must be a flat field: {type: "string" | "number" | "integer" | "boolean"} (a string with enum for a choice).'
      : undefined,
});
export type QuestionProperty = z.infer<typeof QuestionPropertySchema>;
export type TextQuestionProperty = z.infer<typeof StringProperty>;
export type EnumQuestionProperty = TextQuestionProperty & { enum: string[] };

/** Whether a field is a choice among values. */
export function isChoice(property: QuestionProperty): property is EnumQuestionProperty {
  return property.type === 'string' && Array.isArray(property.enum);
}

/** The form a question requests (MCP elicitation's `requestedSchema`). */
export const RequestedSchemaSchema = z
  .object({
    type: z.literal('object'),
    properties: z
      .record(z.string(), QuestionPropertySchema)
      .superRefine((p, ctx) => {
        for (const name of Object.keys(p))
          if (!FieldName.safeParse(name).success)
            ctx.addIssue({ code: 'custom', path: [name], message: `"${name.slice(0, 64)}": ${FIELD_NAME_RULE}` });
      })
      .refine((p) => Object.keys(p).length >= 1, 'Ask for at least one field.')
      .refine(
        (p) => Object.keys(p).length <= QUESTION_LIMITS.properties,
        `Ask for at most ${QUESTION_LIMITS.properties} fields.`,
      ),
    required: z.array(FieldName).max(QUESTION_LIMITS.properties).optional(),
  })
  .strict()
  .superRefine((schema, ctx) => {
    const required = schema.required ?? [];
    if (new Set(required).size !== required.length)
      ctx.addIssue({ code: 'custom', path: ['required'], message: 'required names a field twice.' });
    for (const name of required)
      if (!Object.hasOwn(schema.properties, name))
        ctx.addIssue({
          code: 'custom',
          path: ['required'],
          message: `required names "${name}", which is not a property.`,
        });
    for (const [name, property] of Object.entries(schema.properties)) {
      if (property.default === undefined) continue;
      const problem = valueProblem(property, property.default);
      if (problem) ctx.addIssue({ code: 'custom', path: ['properties', name, 'default'], message: problem });
    }
  });
export type RequestedSchema = z.infer<typeof RequestedSchemaSchema>;

/** The arguments of `ask_user`. */
export const AskUserInputSchema = z
  .object({
    message: z.string().trim().min(1).max(QUESTION_LIMITS.messageChars).describe('The question, in plain words.'),
    requestedSchema: RequestedSchemaSchema.describe(
      'The answer form: {type: "object", properties: {name: field}, required?: [names]}. Fields are flat: ' +
        'string (title, description, minLength, maxLength, format: email | uri | date | date-time, default), ' +
        'number or integer (minimum, maximum, default), boolean (default), or a string enum ' +
        '({type: "string", enum: [values], enumNames?: [labels]}) for a choice.',
    ),
  })
  .strict();
export type AskUserInput = z.infer<typeof AskUserInputSchema>;

/** One answered value. */
const AnswerValueSchema = z.union([z.string().max(QUESTION_LIMITS.stringChars), z.number().finite(), z.boolean()]);
const AnswerContentSchema = z.record(FieldName, AnswerValueSchema);
export type AnswerContent = z.infer<typeof AnswerContentSchema>;

/** What the user answers (the resume entry's payload): the form's content, or a refusal to answer. */
export const QuestionAnswerSchema = z
  .object({ action: z.enum(['accept', 'decline']), content: AnswerContentSchema.optional() })
  .strict();
export type QuestionAnswer = z.infer<typeof QuestionAnswerSchema>;

/** The answer as JSON Schema (its `content` is the question's own form in each interrupt). */
export const QUESTION_ANSWER_JSON_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['accept', 'decline'] },
    content: { type: 'object' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

/** The answer's JSON Schema for one question: `content` is the requested form. */
export function questionResponseSchema(requested: RequestedSchema): Record<string, unknown> {
  return {
    ...QUESTION_ANSWER_JSON_SCHEMA,
    properties: { ...QUESTION_ANSWER_JSON_SCHEMA.properties, content: requested },
  };
}

/** A question interrupt's metadata: the form (its message is the interrupt's `message`). */
export const QuestionMetadataSchema = z.object({ requestedSchema: RequestedSchemaSchema });

/** What happened to a question, as the decision event records it and the view keeps it. */
export const QuestionAnsweredValueSchema = z.object({
  toolCallId: z.string(),
  /** accept: answered with `content`; decline: the user would not answer; expired: nobody answered in time. */
  action: z.enum(['accept', 'decline', 'expired']),
  content: AnswerContentSchema.optional(),
});
export type QuestionAnsweredValue = z.infer<typeof QuestionAnsweredValueSchema>;

/** One thing wrong with an answer, for one field (`` for the answer as a whole). */
export interface AnswerProblem {
  field: string;
  message: string;
}

/** A field's label: its title, else its name. */
export function fieldLabel(name: string, property: QuestionProperty): string {
  return property.title ?? name;
}

const count = (s: string) => Array.from(s).length;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Whether `text` is a valid value of `format` (the same rules in the panel and on the server). */
export function matchesFormat(format: StringFormat, text: string): boolean {
  switch (format) {
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) && text.length <= 320;
    case 'uri': {
      if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(text)) return false;
      try {
        new URL(text);
        return true;
      } catch {
        return false;
      }
    }
    case 'date': {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      if (!m) return false;
      const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
      return (
        d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
      );
    }
    case 'date-time':
      return (
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text) &&
        matchesFormat('date', text.slice(0, 10)) &&
        Number.isFinite(Date.parse(text))
      );
  }
}

const FORMAT_WORDS: Record<StringFormat, string> = {
  email: 'an email address',
  uri: 'a web address (URL)',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (YYYY-MM-DDTHH:MM with a time zone)',
};

/** What is wrong with one value for its field, or null. */
function valueProblem(property: QuestionProperty, value: unknown): string | null {
  if (property.type === 'boolean') return typeof value === 'boolean' ? null : 'Choose yes or no.';
  if (property.type === 'number' || property.type === 'integer') {
    if (typeof value !== 'number' || !Number.isFinite(value)) return 'Enter a number.';
    if (property.type === 'integer' && !Number.isInteger(value)) return 'Enter a whole number.';
    if (property.minimum !== undefined && value < property.minimum) return `Enter ${property.minimum} or more.`;
    if (property.maximum !== undefined && value > property.maximum) return `Enter ${property.maximum} or less.`;
    return null;
  }
  if (typeof value !== 'string') return 'Enter text.';
  if (isChoice(property)) return property.enum.includes(value) ? null : 'Choose one of the options.';
  const text = property as TextQuestionProperty;
  const n = count(value);
  if (text.minLength !== undefined && n < text.minLength)
    return `Enter at least ${plural(text.minLength, 'character')} (this has ${n}).`;
  const max = Math.min(text.maxLength ?? QUESTION_LIMITS.stringChars, QUESTION_LIMITS.stringChars);
  if (n > max) return `Enter at most ${plural(max, 'character')} (this has ${n}).`;
  if (text.format && !matchesFormat(text.format, value)) return `Enter ${FORMAT_WORDS[text.format]}.`;
  return null;
}

/**
 * Everything wrong with an accepted answer's content for its form: a field that was not asked for,
 * a required field left out, a value of the wrong type, outside the choices, its length or range,
 * or not of its format. Empty when the answer fits.
 */
export function answerProblems(schema: RequestedSchema, content: unknown): AnswerProblem[] {
  if (content === null || typeof content !== 'object' || Array.isArray(content))
    return [{ field: '', message: 'The answer must be an object of the fields asked for.' }];
  const given = content as Record<string, unknown>;
  const problems: AnswerProblem[] = [];
  for (const field of Object.keys(given))
    if (!Object.hasOwn(schema.properties, field)) problems.push({ field, message: 'This was not asked for.' });
  for (const [field, property] of Object.entries(schema.properties)) {
    const value = given[field];
    if (value === undefined) {
      if (schema.required?.includes(field)) problems.push({ field, message: 'This is required.' });
      continue;
    }
    const problem = valueProblem(property, value);
    if (problem) problems.push({ field, message: problem });
  }
  return problems;
}

/** The problems as one sentence naming the fields by their labels ("Assignee: Choose one of the options."). */
export function describeProblems(schema: RequestedSchema, problems: readonly AnswerProblem[]): string {
  return problems
    .slice(0, 5)
    .map((p) => {
      const property = schema.properties[p.field];
      return property
        ? `${fieldLabel(p.field, property)}: ${p.message}`
        : p.field
          ? `${p.field}: ${p.message}`
          : p.message;
    })
    .join(' ');
}

/** The tool result the model gets for a question (what the user answered, or that they did not). */
export function questionResult(answered: Pick<QuestionAnsweredValue, 'action' | 'content'>): Record<string, unknown> {
  if (answered.action === 'accept') return { action: 'accept', content: answered.content ?? {} };
  if (answered.action === 'decline')
    return { action: 'decline', message: 'The user declined to answer this question. Do not guess the answer.' };
  return {
    action: 'expired',
    message: 'The user did not answer this question before it expired. Do not guess the answer.',
  };
}
