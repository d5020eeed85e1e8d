// The rating controls as rendered (server-side markup): reasons of a thumbs down shown as text,
// offered as labelled checkboxes in the form, and shown read-only on the review page.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  FeedbackButtons,
  type FeedbackButtonsProps,
  feedbackStep,
} from '@/features/in-app-agent/components/FeedbackButtons';
import { FEEDBACK_REASON_LABELS, FEEDBACK_REASONS } from '@/features/in-app-agent/schema';

const render = (props: FeedbackButtonsProps) => renderToStaticMarkup(createElement(FeedbackButtons, props));
const submit = async () => undefined;

describe('FeedbackButtons', () => {
  it('shows the saved reasons of a thumbs down as text, in the product order', () => {
    const html = render({ current: { value: -1, comment: null, reasons: ['slow', 'wrong'] }, onSubmit: submit });
    expect(html).toContain('data-testid="feedback-reasons"');
    expect(html).toContain('Reasons: Wrong, Slow');
    // Without a comment, the reasons line offers the way back to the form.
    expect(html).toMatch(/Reasons: Wrong, Slow <button type="button" class="underline">Edit<\/button>/);
  });

  it('offers every reason as a labelled checkbox in the thumbs-down form, saved ones ticked', () => {
    const html = render({
      current: { value: -1, comment: 'x', reasons: ['incomplete'] },
      onSubmit: submit,
      draft: 'x',
      onDraftChange: () => undefined,
    });
    expect(html).toContain('<legend class="mb-0.5">What went wrong? (choose any)</legend>');
    for (const reason of FEEDBACK_REASONS) {
      expect(html).toMatch(
        new RegExp(
          `<label[^>]*><input type="checkbox" data-testid="feedback-reason-${reason}"[^>]*/>` +
            `${FEEDBACK_REASON_LABELS[reason]}</label>`,
        ),
      );
    }
    expect(html).toMatch(/data-testid="feedback-reason-incomplete" checked=""/);
    expect(html).not.toMatch(/data-testid="feedback-reason-wrong" checked=""/);
    // While the form is open, its checkboxes are the reasons: no second, stale line.
    expect(html).not.toContain('data-testid="feedback-reasons"');
  });

  it('shows reasons and comment read-only on the review page', () => {
    const html = render({ current: { value: -1, comment: 'Closed issue listed', reasons: ['unsafe', 'other'] } });
    expect(html).toContain('Reasons: Unsafe or harmful, Other');
    expect(html).toContain('Comment: Closed issue listed');
    expect(html).not.toContain('type="checkbox"');
    expect(html).not.toContain('>Edit<');
  });

  it('shows no reasons for a thumbs up', () => {
    const html = render({ current: { value: 1, comment: null, reasons: ['wrong'] }, onSubmit: submit });
    expect(html).not.toContain('Reasons:');
  });
});

describe('what the rating controls save', () => {
  it('saves a thumbs up at once, and closes an open thumbs-down form', () => {
    expect(feedbackStep({ kind: 'up' }, false)).toEqual({ save: { value: 1 }, formOpen: false });
    expect(feedbackStep({ kind: 'up' }, true)).toEqual({ save: { value: 1 }, formOpen: false });
  });

  it('only opens the form on a thumbs down: nothing is saved before it is sent', () => {
    expect(feedbackStep({ kind: 'down' }, false)).toEqual({ formOpen: true });
    // A second click closes it, still saving nothing.
    expect(feedbackStep({ kind: 'down' }, true)).toEqual({ formOpen: false });
  });

  it('saves the thumbs down when sent, reasons and comment optional', () => {
    expect(feedbackStep({ kind: 'send', comment: '  It listed a closed issue ', reasons: ['wrong'] }, true)).toEqual({
      save: { value: -1, comment: 'It listed a closed issue', reasons: ['wrong'] },
      formOpen: true,
    });
    expect(feedbackStep({ kind: 'send', comment: ' ', reasons: [] }, true)).toEqual({
      save: { value: -1, comment: undefined, reasons: undefined },
      formOpen: true,
    });
  });

  it('saves nothing when the form is cancelled', () => {
    expect(feedbackStep({ kind: 'cancel' }, true)).toEqual({ formOpen: false });
  });

  it('shows an open form as not yet rated: the thumbs down is not pressed until sent', () => {
    const html = render({ onSubmit: submit, draft: '', onDraftChange: () => undefined });
    expect(html).toContain('data-testid="feedback-reason-choices"');
    expect(html).toMatch(/data-testid="feedback-down" aria-pressed="false"/);
    expect(html).not.toContain('Rated not helpful');
    expect(html).toContain('>Send feedback</button>');
    expect(html).toContain('data-testid="feedback-cancel"');
    // A thumbs up saved before stays what is shown while a thumbs down is being written.
    const up = render({
      current: { value: 1, comment: null },
      onSubmit: submit,
      draft: '',
      onDraftChange: () => undefined,
    });
    expect(up).toMatch(/data-testid="feedback-up" aria-pressed="true"/);
    expect(up).toContain('Rated helpful');
  });
});
