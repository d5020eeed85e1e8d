// The rating controls as rendered (server-side markup): reasons of a thumbs down shown as text,
// offered as labelled checkboxes in the form, and shown read-only on the review page.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { FeedbackButtons, type FeedbackButtonsProps } from '@/features/in-app-agent/components/FeedbackButtons';
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
