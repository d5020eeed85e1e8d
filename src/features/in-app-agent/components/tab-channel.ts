/**
 * How the panel's tabs tell each other what happened: a run started in a conversation (the other
 * tabs showing it follow the same live answer, and see approvals answered elsewhere), or the user
 * signed out (every tab forgets the panel's data). One `BroadcastChannel` per tab and store; the
 * messages are checked with zod like anything else that crosses a boundary.
 */
import { z } from 'zod';
import { browserStorages, clearAssistantStorage } from './storage';

const TAB_CHANNEL_NAME = 'in-app-agent';

export const TabMessageSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('run-started'),
    userId: z.string(),
    projectId: z.string(),
    conversationId: z.string(),
    runId: z.string(),
  }),
  z.object({ kind: z.literal('signed-out') }),
]);
export type TabMessage = z.infer<typeof TabMessageSchema>;

/** One tab's end of the channel (a `BroadcastChannel` in the browser; tests pass an in-memory bus). */
export interface ChannelLike {
  postMessage(message: unknown): void;
  /** Receives what the other ends post (never what this end posts). */
  listen(onMessage: (data: unknown) => void): void;
  close(): void;
}

export function openBrowserChannel(): ChannelLike | null {
  if (typeof BroadcastChannel === 'undefined') return null;
  let channel: BroadcastChannel;
  try {
    channel = new BroadcastChannel(TAB_CHANNEL_NAME);
  } catch {
    return null;
  }
  return {
    postMessage: (message) => channel.postMessage(message),
    listen: (onMessage) => {
      channel.onmessage = (event: MessageEvent) => onMessage(event.data);
    },
    close: () => {
      channel.onmessage = null;
      channel.close();
    },
  };
}

/**
 * For the host's sign-out: removes the panel's data of every user from this browser and tells
 * every open tab (this one included) to drop what it holds in memory and stop writing.
 */
export function forgetAssistantData(): void {
  const { local, session } = browserStorages();
  clearAssistantStorage([local, session]);
  const channel = openBrowserChannel();
  if (!channel) return;
  channel.postMessage({ kind: 'signed-out' } satisfies TabMessage);
  channel.close();
}
