import { describe, expect, it } from 'vitest';
import { describeError, errorFromHttp } from '@/features/in-app-agent/components/errors';

describe('describeError', () => {
  it('says a known refusal once instead of repeating the server wording in brackets', () => {
    const e = describeError('RUN_IN_PROGRESS', 'Another answer is still being written in this conversation.');
    expect(e.message).toBe('The assistant is still answering in this conversation (maybe in another tab). Wait a moment and retry.');
    expect(e.retryable).toBe(true);
  });

  it('keeps the server detail where it tells the user something new', () => {
    expect(describeError('TOOL_ERROR', 'list_issues: timeout').message).toBe('A tool failed while answering. (list_issues: timeout)');
    expect(describeError('RATE_LIMITED', 'Too many requests. Try again in 12 s.').message).toBe('Too many requests. Try again in 12 s.');
    // The same sentence made more precise is said once, in its precise form.
    expect(describeError('INTERRUPT_INVALID_ARGS', 'The edited arguments are not valid for create_issue.').message).toBe(
      'The edited arguments are not valid for create_issue.',
    );
  });

  it('falls back to the server message for unknown codes and marks refusals not retryable', () => {
    expect(describeError('SOMETHING_NEW', 'Plain words.').message).toBe('Plain words.');
    expect(describeError(undefined).message).toBe('Something went wrong.');
    expect(describeError('FORBIDDEN', 'x').retryable).toBe(false);
  });

  it('explains the refusals of an unavailable or restarting server as retryable', () => {
    const db = describeError('DATABASE_UNAVAILABLE', 'The database is unavailable. Try again shortly.');
    expect(db.message).toBe('The service is briefly unavailable (its database cannot be reached). Wait a moment and retry.');
    expect(db.retryable).toBe(true);
    const draining = errorFromHttp({ status: 503, payload: { error: { code: 'DRAINING', message: 'This server is restarting.' } } });
    expect(draining).toMatchObject({ code: 'DRAINING', message: 'The server is restarting. Retry in a moment.', retryable: true });
    // A proxy's own 503 (no body of ours) still reads as "retry shortly", not as a failure.
    expect(errorFromHttp({ status: 503 }).message).toBe('The service is briefly unavailable. Wait a moment and retry.');
  });
});
