'use client';
/**
 * The panel's data calls (conversation history, replay, feedback, model info, the review's export and
 * paging), through the host's tRPC client. The only file of the panel that knows the host's tRPC wiring.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { useMemo } from 'react';
import { type AppRouter, useTRPCClient } from '../host-client';
import type { AgentStoreApi } from './agent-store';
import type { MentionItem } from './composer/mention-logic';
import { humanize } from './tool-ui/results';

type Out = inferRouterOutputs<AppRouter>['agent'];
type In = inferRouterInputs<AppRouter>['agent'];

type ConversationListOutput = Out['conversations']['list'];
type ConversationGetOutput = Out['conversations']['get'];

export interface AgentApi {
  listConversations(input: In['conversations']['list']): Promise<ConversationListOutput>;
  getConversation(input: In['conversations']['get']): Promise<ConversationGetOutput>;
  /** The page of a conversation before a run ("Show earlier messages"). */
  olderMessages(input: In['conversations']['older']): Promise<Out['conversations']['older']>;
  /** Shows another version of a turn; answers the newest page of the conversation. */
  selectVersion(input: In['conversations']['selectVersion']): Promise<Out['conversations']['selectVersion']>;
  renameConversation(input: In['conversations']['rename']): Promise<unknown>;
  deleteConversation(input: In['conversations']['delete']): Promise<unknown>;
  restoreConversation(input: In['conversations']['restore']): Promise<unknown>;
  submitFeedback(input: In['feedback']['submit']): Promise<unknown>;
  modelInfo(input: In['model']['info']): Promise<Out['model']['info']>;
  /** Review (ADMIN/OWNER): one conversation with replay, feedback, audit, approvals and runs. */
  exportConversation(input: In['review']['export']): Promise<Out['review']['export']>;
  /** Review: the page of a conversation before a run (its earlier messages). */
  reviewOlder(input: In['review']['older']): Promise<Out['review']['older']>;
}

export function useAgentApi(): AgentApi {
  const client = useTRPCClient();
  return useMemo<AgentApi>(
    () => ({
      listConversations: (input) => client.agent.conversations.list.query(input),
      getConversation: (input) => client.agent.conversations.get.query(input),
      olderMessages: (input) => client.agent.conversations.older.query(input),
      selectVersion: (input) => client.agent.conversations.selectVersion.mutate(input),
      renameConversation: (input) => client.agent.conversations.rename.mutate(input),
      deleteConversation: (input) => client.agent.conversations.delete.mutate(input),
      restoreConversation: (input) => client.agent.conversations.restore.mutate(input),
      submitFeedback: (input) => client.agent.feedback.submit.mutate(input),
      modelInfo: (input) => client.agent.model.info.query(input),
      exportConversation: (input) => client.agent.review.export.query(input),
      reviewOlder: (input) => client.agent.review.older.query(input),
    }),
    [client],
  );
}

/** A tRPC error's stable app code (`data.appCode`) or its tRPC code. */
function trpcErrorCode(err: unknown): string | undefined {
  const data = (err as { data?: { appCode?: unknown; code?: unknown } } | null)?.data;
  if (typeof data?.appCode === 'string') return data.appCode;
  if (typeof data?.code === 'string') return data.code;
  return undefined;
}

export function trpcErrorMessage(err: unknown, fallback: string): string {
  const m = (err as { message?: unknown } | null)?.message;
  return typeof m === 'string' && m ? m : fallback;
}

/** A failed load as the store reads it: gone (the conversation) or why not. */
function failure(err: unknown, fallback: string): { ok: false; notFound: boolean; message: string } {
  const code = trpcErrorCode(err);
  return {
    ok: false,
    notFound: code === 'NOT_FOUND' || code === 'CONVERSATION_NOT_FOUND',
    message: trpcErrorMessage(err, fallback),
  };
}

/** What the store keeps of a load's answer (`keep`), or why the load failed. */
async function load<R, T extends object>(
  call: () => Promise<R>,
  keep: (res: R) => T,
  fallback: string,
): Promise<({ ok: true } & T) | ReturnType<typeof failure>> {
  try {
    return { ok: true, ...keep(await call()) };
  } catch (err) {
    return failure(err, fallback);
  }
}

/** A page of a conversation: its messages and where the earlier ones start. */
function pageOf<V, B>(res: { view: V; olderBefore: B }) {
  return { view: res.view, olderBefore: res.olderBefore };
}

/**
 * The data calls the panel's store makes (agent-store.ts), over this host's tRPC: loading a
 * conversation (with its live run) and its earlier pages, choosing a version of a turn, and
 * feedback. tRPC errors become plain results and messages, so the store stays free of the host's
 * wiring. `current` returns the latest API (it may change between renders; the store outlives them).
 */
export function agentStoreApi(current: () => AgentApi, projectId: string): AgentStoreApi {
  return {
    loadConversation: (conversationId) =>
      load(
        () => current().getConversation({ projectId, conversationId }),
        ({ view, feedback, liveRunId, olderBefore }) => ({ view, feedback, liveRunId, olderBefore }),
        'Could not load the conversation.',
      ),
    loadOlder: (conversationId, before) =>
      load(
        () => current().olderMessages({ projectId, conversationId, before }),
        pageOf,
        'Could not load earlier messages.',
      ),
    selectVersion: (conversationId, runId) =>
      load(() => current().selectVersion({ projectId, conversationId, runId }), pageOf, 'Could not show that version.'),
    async submitFeedback(input) {
      try {
        await current().submitFeedback({ projectId, ...input });
      } catch (err) {
        throw new Error(trpcErrorMessage(err, 'Could not save your feedback.'));
      }
    },
    modelInfo: () => current().modelInfo({ projectId }),
  };
}

/** What the composer's typeahead offers for a query: issues (`#`) or members (`@`). */
export interface MentionSource {
  issues(query: string, signal: AbortSignal): Promise<MentionItem[]>;
  members(query: string, signal: AbortSignal): Promise<MentionItem[]>;
}

const MENTION_LIMIT = 8;

/**
 * The typeahead's source: the product's own issue search and member list (the host's
 * `tracker.issues.list`, `tracker.issues.get` and `tracker.members.list`), so the user sees exactly what their role may read
 * (a role without it gets a refusal, and the list says so). Members are read once per source.
 */
export function useMentionSource(projectId: string): MentionSource {
  const client = useTRPCClient();
  return useMemo<MentionSource>(() => {
    let roster: Promise<Array<{ userId: string; name: string; email: string; role: string }>> | null = null;
    return {
      async issues(query, signal) {
        const number = /^\d{1,7}$/.test(query) ? Number(query) : null;
        const [byNumber, page] = await Promise.all([
          number
            ? client.tracker.issues.get.query({ projectId, number }, { signal }).catch((err: unknown) => {
                if (trpcErrorCode(err) === 'NOT_FOUND' || trpcErrorCode(err) === 'ISSUE_NOT_FOUND') return null;
                throw err;
              })
            : Promise.resolve(null),
          client.tracker.issues.list.query(
            { projectId, ...(query && number === null ? { search: query } : {}), limit: MENTION_LIMIT },
            { signal },
          ),
        ]);
        const rows = [...(byNumber ? [byNumber] : []), ...page.issues.filter((i) => i.number !== number)];
        return rows.slice(0, MENTION_LIMIT).map((i) => ({
          kind: 'issue' as const,
          id: String(i.number),
          label: `#${i.number}`,
          title: i.title,
          detail: humanize(i.status),
        }));
      },
      async members(query, signal) {
        roster ??= client.tracker.members.list.query({ projectId }, { signal }).catch((err: unknown) => {
          roster = null;
          throw err;
        });
        const q = query.toLowerCase();
        const members = await roster;
        return members
          .filter((m) => !q || m.name.toLowerCase().includes(q) || m.email.toLowerCase().includes(q))
          .slice(0, MENTION_LIMIT)
          .map((m) => ({ kind: 'member' as const, id: m.userId, label: `@${m.name}`, title: m.name, detail: m.email }));
      },
    };
  }, [client, projectId]);
}
