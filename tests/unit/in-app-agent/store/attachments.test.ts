// The panel's store and the files attached to the next message, without a browser: an upload shows
// at once and becomes the part the message carries; the message sends its files as AG-UI image
// parts naming the uploads; a refused upload says why and is not sent; a refused message gives its
// text and files back; a reload keeps the uploaded files; removing one deletes the upload.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentStore } from '@/features/in-app-agent/components/agent-store';
import type { AttachmentPart } from '@/features/in-app-agent/schema';
import { errorResponse, makeStore, MemoryStorage, settle, type Harness } from './harness';

const stores: AgentStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.unmount();
});

const PART: AttachmentPart = {
  type: 'image',
  attachmentId: 'att_0000000000000000000000aa',
  mediaType: 'image/png',
  name: 'shot.png',
  size: 1234,
  width: 40,
  height: 30,
};

/** A store whose upload and delete requests are answered here; everything else by the scripted server. */
function harness(local = new MemoryStorage()) {
  const uploads: Array<{ url: string; resolve: (r: Response) => void }> = [];
  const deletes: string[] = [];
  let h: Harness | undefined;
  const fetch = (url: string, init?: RequestInit): Promise<Response> => {
    if (url.includes('/in-app-agent/attachments')) {
      if (init?.method === 'DELETE') {
        deletes.push(url);
        return Promise.resolve(new Response(null, { status: 204 }));
      }
      return new Promise((resolve) => uploads.push({ url, resolve }));
    }
    return h!.server.fetch(url, init);
  };
  h = makeStore({ fetch, local });
  stores.push(h.store);
  h.store.mount();
  return { ...h, uploads, deletes };
}

const uploaded = (part: AttachmentPart) =>
  new Response(JSON.stringify({ attachment: part }), { status: 201, headers: { 'content-type': 'application/json' } });

describe('agent store: attachments', () => {
  it('uploads a file, sends it with the message as an AG-UI image part, and empties the tray', async () => {
    const h = harness();
    h.store.attachFiles([new Blob(['png'], { type: 'image/png' })]);
    expect(h.store.getSnapshot().attachments).toMatchObject([{ name: 'Pasted image.png', status: 'uploading' }]);
    expect(h.uploads[0]!.url).toContain('/in-app-agent/attachments?name=Pasted%20image.png');
    h.uploads[0]!.resolve(uploaded(PART));
    await settle();
    expect(h.store.getSnapshot().attachments).toMatchObject([{ name: 'shot.png', status: 'ready', part: PART }]);

    h.server.onStart(() => errorResponse(500, 'INTERNAL_ERROR'));
    h.store.setDraft('what is this?');
    h.store.send();
    await settle();
    const start = h.server.of('start')[0]!;
    expect((start.body!.messages as Array<{ content: unknown }>)[0]!.content).toEqual([
      { type: 'image', source: { type: 'file', value: PART.attachmentId, mimeType: 'image/png' } },
      { type: 'text', text: 'what is this?' },
    ]);
  });

  it('gives a refused message its text and files back, and keeps uploaded files across a reload', async () => {
    const local = new MemoryStorage();
    const h = harness(local);
    h.store.attachFiles([Object.assign(new Blob(['x'], { type: 'image/png' }), { name: 'shot.png' })]);
    h.uploads[0]!.resolve(uploaded(PART));
    await settle();
    h.server.onStart(() =>
      errorResponse(422, 'ATTACHMENT_NOT_SUPPORTED_BY_MODEL', 'The configured model does not read images.'),
    );
    h.store.setDraft('describe it');
    h.store.send();
    await settle();
    const state = h.store.getSnapshot();
    expect(state.draft).toBe('describe it');
    expect(state.attachments).toMatchObject([{ status: 'ready', part: PART }]);
    expect(state.requestError).toMatchObject({ code: 'ATTACHMENT_NOT_SUPPORTED_BY_MODEL', retryable: false });
    expect(state.requestError?.message).toBe('The configured model does not read images.');

    h.store.unmount();
    const again = harness(local);
    expect(again.store.getSnapshot().attachments).toMatchObject([{ status: 'ready', part: PART }]);
    again.store.removeAttachment(again.store.getSnapshot().attachments[0]!.localId);
    await settle();
    expect(again.store.getSnapshot().attachments).toEqual([]);
    expect(again.deletes).toEqual([
      expect.stringMatching(new RegExp(`/in-app-agent/attachments/${PART.attachmentId}$`)),
    ]);
  });

  it('shows why an upload was refused, and sends nothing for it', async () => {
    const h = harness();
    h.store.attachFiles([Object.assign(new Blob(['PK']), { name: 'a.zip' })]);
    h.uploads[0]!.resolve(errorResponse(415, 'ATTACHMENT_TYPE_NOT_ALLOWED', 'nope'));
    await settle();
    expect(h.store.getSnapshot().attachments).toMatchObject([
      { name: 'a.zip', status: 'failed', error: { code: 'ATTACHMENT_TYPE_NOT_ALLOWED' } },
    ]);
    expect(h.store.getSnapshot().attachments[0]!.error!.message).toMatch(/cannot be attached/);
    h.store.send();
    await settle();
    expect(h.server.of('start')).toEqual([]);
  });
});
