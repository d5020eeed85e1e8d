'use client';
/**
 * Browser notifications for what the user would otherwise miss while the panel is closed or the
 * tab hidden: an approval (or question) came to wait, or a long answer finished. The permission is
 * asked once per user, and only right after a user action (sending a message to the assistant);
 * nothing is shown without it. Clicking a notification opens the panel on its conversation.
 */
import { useEffect, useRef } from 'react';
import type { AgentStore } from '../agent-store';
import { useAgentActions, useAgentBinding } from '../panel-context';
import { browserStorages, SafeStorage, storageKeys } from '../storage';
import { type AttentionNotice, finishedNotice, outOfSight, waitingNotice } from './attention';
import type { WaitingListData } from './use-waiting';

/** Whether the user sees the panel now. */
function sightOf(store: AgentStore) {
  return { panelOpen: store.getSnapshot().open, hidden: document.visibilityState === 'hidden' };
}

function notificationsSupported(): boolean {
  return typeof window !== 'undefined' && 'Notification' in window;
}

export function useAttentionNotifications(waiting: WaitingListData | null): void {
  const { store } = useAgentBinding();
  const actions = useAgentActions();
  const lastTotal = useRef<number | null>(null);

  const show = useRef((notice: AttentionNotice) => {
    if (!notificationsSupported() || Notification.permission !== 'granted') return;
    try {
      const n = new Notification(notice.title, { body: notice.body, tag: notice.tag });
      n.onclick = () => {
        window.focus();
        if (notice.conversationId) actions.selectConversation(notice.conversationId);
        actions.setOpen(true);
        n.close();
      };
    } catch {
      // Some browsers allow notifications only from a service worker: then there are none.
    }
  });

  // Requests that came to wait.
  useEffect(() => {
    if (!waiting) return;
    const notice = waitingNotice(lastTotal.current, waiting);
    lastTotal.current = waiting.total;
    if (notice && outOfSight(sightOf(store))) show.current(notice);
  }, [waiting, store]);

  // A long answer that finished; the permission asked after the first message sent.
  useEffect(() => {
    const storage = new SafeStorage(browserStorages().local);
    let phase = store.getSnapshot().connection;
    let startedAt: number | null = null;
    return store.subscribe(() => {
      const state = store.getSnapshot();
      const next = state.connection;
      if (next === phase) return;
      if (phase === 'idle' && next === 'sending') {
        // The user just sent something (this runs inside their action): ask once.
        const key = storageKeys(state.userId, state.projectId).notificationsAsked();
        if (notificationsSupported() && Notification.permission === 'default' && !storage.read(key)) {
          storage.write(key, new Date().toISOString());
          void Notification.requestPermission().catch(() => undefined);
        }
      }
      if (next !== 'idle' && startedAt === null) startedAt = Date.now();
      if (next === 'idle' && startedAt !== null) {
        const notice = finishedNotice({
          startedAt,
          endedAt: Date.now(),
          completed: state.view.runs.at(-1)?.status === 'completed',
          conversationId: state.conversationId,
          title: null,
        });
        startedAt = null;
        if (notice && outOfSight(sightOf(store))) show.current(notice);
      }
      phase = next;
    });
  }, [store]);
}
