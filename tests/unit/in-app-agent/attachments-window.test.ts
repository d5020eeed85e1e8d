// Attachments in the model's history window: they count against the context budget, old ones leave
// first (named to the model instead of sent, before any turn is left out), the newest message keeps
// its own, a text file is cut to its share, and a model without vision is told of images instead
// of sent them. Also: what the model is told a capability is by default, and file names a provider takes.
import { describe, expect, it } from 'vitest';
import type { AttachmentPart, ConversationView } from '@/features/in-app-agent/schema';
import { historyToMessages } from '@/features/in-app-agent/server/agent';
import { providerFileName } from '@/features/in-app-agent/server/attachments';
import { modelAccepts } from '@/features/in-app-agent/server/model';
import { parseEnv } from '@/server/env';

const image = (n: number): AttachmentPart => ({
  type: 'image',
  attachmentId: `att_${String(n).padStart(24, '0')}`,
  mediaType: 'image/png',
  name: `shot-${n}.png`,
  size: 100_000,
  width: 1200,
  height: 1000, // 1,600 tokens
});

function view(turns: Array<{ text: string; parts?: AttachmentPart[] }>): ConversationView {
  return {
    threadId: 'cv_test',
    messages: turns.flatMap((t, i) => [
      {
        id: `u${i}`,
        role: 'user' as const,
        content: t.text,
        runId: `r${i}`,
        ...(t.parts ? { parts: [...t.parts, { type: 'text' as const, text: t.text }] } : {}),
      },
      // The newest message is the one being asked: no answer yet.
      ...(i < turns.length - 1
        ? [
            {
              id: `a${i}`,
              role: 'assistant' as const,
              content: `answer ${i}`,
              runId: `r${i}`,
              streaming: false,
              toolCalls: [],
            },
          ]
        : []),
    ]),
    runs: turns.map((_, i) => ({ runId: `r${i}`, status: 'completed' as const, interrupts: [] })),
    decisions: {},
    navigations: [],
  };
}

/** What each user message carries: `img` for an image sent, `gone` for one named instead, else its text. */
function shape(messages: ReturnType<typeof historyToMessages>): string[][] {
  return messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? [m.content]
        : m.content.map((p) =>
            p.type === 'attachment' ? 'img' : p.text.startsWith('[An earlier attachment') ? 'gone' : p.text,
          ),
    );
}

describe('attachments in the history window', () => {
  const three = view([
    { text: 'first', parts: [image(1)] },
    { text: 'second', parts: [image(2)] },
    { text: 'third', parts: [image(3)] },
  ]);

  it('sends every attachment when they fit', () => {
    expect(shape(historyToMessages(three, 100_000))).toEqual([
      ['img', 'first'],
      ['img', 'second'],
      ['img', 'third'],
    ]);
  });

  it('lets old attachments leave first, keeping every turn, and the newest message its own', () => {
    // Room for two images and the text: the oldest image is named instead of sent.
    expect(shape(historyToMessages(three, 3_400))).toEqual([
      ['gone', 'first'],
      ['img', 'second'],
      ['img', 'third'],
    ]);
    // Room for one: only the newest message's image is sent.
    expect(shape(historyToMessages(three, 1_800))).toEqual([
      ['gone', 'first'],
      ['gone', 'second'],
      ['img', 'third'],
    ]);
    // The newest message's image is sent even when it alone is over the budget; older turns go.
    expect(shape(historyToMessages(three, 500))).toEqual([['img', 'third']]);
  });

  it('cuts a text file to half the budget, and counts it so', () => {
    const notes: AttachmentPart = {
      type: 'file',
      attachmentId: 'att_000000000000000000000009',
      mediaType: 'text/plain',
      name: 'log.txt',
      size: 400_000,
    };
    const messages = historyToMessages(view([{ text: 'older' }, { text: 'read this', parts: [notes] }]), 2_000);
    const user = messages.filter((m) => m.role === 'user');
    expect(user.map((m) => (typeof m.content === 'string' ? m.content : 'parts'))).toEqual(['older', 'parts']);
    const slot = (user[1]!.content as Array<{ type: string; maxChars?: number }>).find((p) => p.type === 'attachment');
    expect(slot?.maxChars).toBe(1_000 * 4);
  });

  it('names images to a model that reads none', () => {
    expect(shape(historyToMessages(three, 100_000, { images: false, documents: false }))).toEqual([
      ['gone', 'first'],
      ['gone', 'second'],
      ['gone', 'third'],
    ]);
  });
});

describe('what a model reads', () => {
  it('by default: the demo model and Bedrock images and PDFs, an OpenAI-compatible model neither; the settings decide', () => {
    const e = parseEnv({ NODE_ENV: 'test' });
    expect(modelAccepts(e, 'demo')).toEqual({ images: true, documents: true });
    expect(modelAccepts(e, 'bedrock')).toEqual({ images: true, documents: true });
    expect(modelAccepts(e, 'openai-compatible')).toEqual({ images: false, documents: false });
    const set = parseEnv({ NODE_ENV: 'test', AGENT_MODEL_VISION: '1', AGENT_MODEL_DOCUMENTS: 'false' });
    expect(modelAccepts(set, 'openai-compatible')).toEqual({ images: true, documents: false });
    expect(() => parseEnv({ NODE_ENV: 'test', AGENT_MODEL_VISION: 'yes' })).toThrow(/AGENT_MODEL_VISION/);
  });

  it('gives providers file names they take (Bedrock: letters, digits, single spaces, - ( ) [ ])', () => {
    expect(providerFileName('Q3 report (final).v2.pdf')).toBe('Q3 report (final)-v2.pdf');
    expect(providerFileName('naïve   résumé.pdf')).toBe('na-ve r-sum.pdf');
    expect(providerFileName('.pdf')).toBe('pdf');
    expect(providerFileName('日本.pdf')).toBe('document.pdf');
  });
});
