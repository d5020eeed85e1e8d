import { describe, expect, it } from 'vitest';
import { describeError, errorFromResponse } from '@/features/in-app-agent/components/errors';

describe('describeError', () => {
  it('says a known refusal once instead of repeating the server wording in brackets', () => {
    const e = describeError('RUN_IN_PROGRESS', 'Another answer is still being written in this conversation.');
    expect(e.message).toBe(
      'The assistant is still answering in this conversation (maybe in another tab). Wait a moment and retry.',
    );
    expect(e.retryable).toBe(true);
  });

  it('keeps the server detail where it tells the user something new', () => {
    expect(describeError('TOOL_ERROR', 'list_issues: timeout').message).toBe(
      'A tool failed while answering. (list_issues: timeout)',
    );
    expect(describeError('RATE_LIMITED', 'Too many requests. Try again in 12 s.').message).toBe(
      'Too many requests. Try again in 12 s.',
    );
    // The same sentence made more precise is said once, in its precise form.
    expect(
      describeError('INTERRUPT_INVALID_ARGS', 'The edited arguments are not valid for create_issue.').message,
    ).toBe('The edited arguments are not valid for create_issue.');
  });

  it('falls back to the server message for unknown codes and marks refusals not retryable', () => {
    expect(describeError('SOMETHING_NEW', 'Plain words.').message).toBe('Plain words.');
    expect(describeError(undefined).message).toBe('Something went wrong.');
    expect(describeError('FORBIDDEN', 'x').retryable).toBe(false);
  });

  it('explains TOOLS_UNAVAILABLE and RUN_STALE in plain words, both with Retry', () => {
    const tools = describeError('TOOLS_UNAVAILABLE', 'The tools could not be listed within the set-up budget.');
    expect(tools.message).toBe(
      "The assistant could not reach this project's tools just now, so it did not answer (without them it " +
        'could not look at or change anything here). Wait a moment and retry.',
    );
    expect(tools.retryable).toBe(true);
    const stale = describeError('RUN_STALE', 'The run stopped responding and was closed.');
    expect(stale.message).toBe(
      'The server that was writing this answer stopped, so the answer was ended. What was already written ' +
        'is kept; Retry asks again.',
    );
    expect(stale.retryable).toBe(true);
    expect(describeError('RESUME_WITH_MESSAGE').retryable).toBe(false);
    expect(describeError('RUN_NOT_FOUND').retryable).toBe(false);
  });

  it('says an overloaded provider is busy (retry in a moment), not unreachable', () => {
    const busy = describeError(
      'MODEL_OVERLOADED',
      'The model provider is overloaded right now. Please try again in a moment.',
    );
    expect(busy.message).toBe(
      "The model's provider is overloaded right now and could not take the request. Wait a moment and retry.",
    );
    expect(busy.retryable).toBe(true);
    expect(describeError('MODEL_UNAVAILABLE').message).toBe('The model is not reachable right now.');
  });

  it('reads a refused request from its error body, else from its status', () => {
    const busy = errorFromResponse(409, { error: { code: 'RUN_IN_PROGRESS', message: 'busy' } });
    expect(busy.code).toBe('RUN_IN_PROGRESS');
    expect(errorFromResponse(401, null).code).toBe('UNAUTHENTICATED');
    expect(errorFromResponse(500, 'not json').code).toBe('INTERNAL_ERROR');
    expect(errorFromResponse(502, 'not json').code).toBe('UNAVAILABLE');
    expect(errorFromResponse(400, {}).code).toBe('INVALID_REQUEST');
  });

  it('explains TOO_MANY_RUNS (answers running at once) in plain words, with Retry', () => {
    const busy = errorFromResponse(429, {
      error: {
        code: 'TOO_MANY_RUNS',
        message: 'You already have 3 answers being written at once. Wait for one to finish, then try again.',
      },
    });
    expect(busy).toEqual({
      code: 'TOO_MANY_RUNS',
      message:
        'The assistant is already writing as many answers for you as it can at once (in other conversations ' +
        'or tabs). Wait for one of them to finish, then retry.',
      retryable: true,
    });
  });

  it('explains the refusals of an unavailable or restarting server as retryable', () => {
    const db = describeError('DATABASE_UNAVAILABLE', 'The database is unavailable. Try again shortly.');
    expect(db.message).toBe(
      'The service is briefly unavailable (its database cannot be reached). Wait a moment and retry.',
    );
    expect(db.retryable).toBe(true);
    const draining = errorFromResponse(503, { error: { code: 'DRAINING', message: 'This server is restarting.' } });
    expect(draining).toMatchObject({
      code: 'DRAINING',
      message: 'The server is restarting. Retry in a moment.',
      retryable: true,
    });
    // A proxy's own 503 (no body of ours) still reads as "retry shortly", not as a failure.
    expect(errorFromResponse(503, null).message).toBe('The service is briefly unavailable. Wait a moment and retry.');
  });
});
