import { describe, expect, it } from 'vitest';
import {
  classifyModelError,
  createModel,
  ModelConfigError,
  selectProvider,
} from '@/features/in-app-agent/server/model';
import { parseEnv } from '@/server/env';

const base = { NODE_ENV: 'test' };

describe('provider factory', () => {
  it('defaults to the offline demo model without credentials', () => {
    const e = parseEnv(base);
    expect(selectProvider(e)).toBe('demo');
    expect(createModel(e).info).toMatchObject({ provider: 'demo', demo: true });
  });

  it('picks Bedrock when AWS region and credentials are present', () => {
    const e = parseEnv({
      ...base,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 's',
      BEDROCK_MODEL_ID: 'anthropic.claude-x',
    });
    expect(selectProvider(e)).toBe('bedrock');
    expect(createModel(e).info).toEqual({
      provider: 'bedrock',
      modelId: 'anthropic.claude-x',
      label: 'Amazon Bedrock · anthropic.claude-x',
      demo: false,
    });
  });

  it('lets an explicit provider win and validates what it needs', () => {
    const e = parseEnv({
      ...base,
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'a',
      AWS_SECRET_ACCESS_KEY: 'b',
    });
    expect(selectProvider(e)).toBe('openai-compatible');
    expect(() => createModel(e)).toThrow(ModelConfigError);
    const ok = parseEnv({
      ...base,
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
      OPENAI_COMPATIBLE_MODEL: 'llama3.1',
    });
    expect(createModel(ok).info).toMatchObject({ provider: 'openai-compatible', modelId: 'llama3.1' });
    expect(() => parseEnv({ ...base, AGENT_MODEL_PROVIDER: 'gpt' })).toThrow(/AGENT_MODEL_PROVIDER/);
    expect(() => parseEnv({ ...base, OPENAI_COMPATIBLE_BASE_URL: 'not a url' })).toThrow(/OPENAI_COMPATIBLE_BASE_URL/);
  });

  it('maps provider failures to stable codes', () => {
    expect(classifyModelError({ statusCode: 429, message: 'x' }).code).toBe('MODEL_RATE_LIMITED');
    expect(classifyModelError({ message: 'ThrottlingException: Too many tokens' }).code).toBe('MODEL_RATE_LIMITED');
    // Bedrock's in-stream exception body, as the provider passes it on (no exception type).
    expect(classifyModelError({ message: 'Too many tokens, please wait before trying again.' }).code).toBe(
      'MODEL_RATE_LIMITED',
    );
    expect(classifyModelError({ message: 'Cannot connect to API: connect ECONNREFUSED' }).code).toBe(
      'MODEL_UNAVAILABLE',
    );
    // Busy, not unreachable: the provider answered that it cannot take the request now.
    expect(classifyModelError({ statusCode: 503, message: 'The server is overloaded or not ready yet.' }).code).toBe(
      'MODEL_OVERLOADED',
    );
    expect(classifyModelError({ statusCode: 529, message: 'Overloaded' }).code).toBe('MODEL_OVERLOADED');
    // Bedrock's serviceUnavailableException in the stream: its bare message.
    expect(classifyModelError({ message: 'Bedrock is unable to process your request.' }).code).toBe('MODEL_OVERLOADED');
    expect(
      classifyModelError({
        statusCode: 429,
        message: 'ModelNotReadyException: Model is not ready for inference. Wait and try your request again.',
      }).code,
    ).toBe('MODEL_OVERLOADED');
    // After the client's retries: the last answer is wrapped.
    expect(
      classifyModelError({ name: 'AI_RetryError', message: 'Failed after 3 attempts.', lastError: { statusCode: 529 } })
        .code,
    ).toBe('MODEL_OVERLOADED');
    expect(classifyModelError({ statusCode: 502, message: 'Bad gateway' }).code).toBe('MODEL_UNAVAILABLE');
    expect(classifyModelError({ statusCode: 400, message: 'bad request' }).code).toBe('MODEL_ERROR');
    expect(classifyModelError(undefined).code).toBe('MODEL_ERROR');
  });
});
