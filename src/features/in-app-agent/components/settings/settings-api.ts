'use client';
/**
 * The project settings' calls (tool permissions, instructions) and a conversation's "always allow"
 * grants, through the host's tRPC client, with what the settings and the panel need to know of a
 * failure: its stable code and message.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { useMemo } from 'react';
import { type AppRouter, useTRPCClient } from '../../host-client';

type Out = inferRouterOutputs<AppRouter>['agent'];
type In = inferRouterInputs<AppRouter>['agent'];

/** What the settings page starts from (`agent.settings.get`). */
export type AssistantSettingsData = Out['settings']['get'];
/** One change of the assistant's settings as the audit page lists it. */
export type SettingsHistoryEntry = Out['settings']['history']['entries'][number];
/** The tools allowed for the rest of a conversation. */
export type Allowances = Out['allowances']['list'];

export interface SettingsApi {
  load(projectId: string): Promise<AssistantSettingsData>;
  savePolicy(input: In['settings']['savePolicy']): Promise<Out['settings']['savePolicy']>;
  saveInstructions(input: In['settings']['saveInstructions']): Promise<Out['settings']['saveInstructions']>;
  allowances(input: In['allowances']['list']): Promise<Allowances>;
  revokeAllowance(input: In['allowances']['revoke']): Promise<Allowances>;
}

export function useSettingsApi(): SettingsApi {
  const client = useTRPCClient();
  return useMemo<SettingsApi>(
    () => ({
      load: (projectId) => client.agent.settings.get.query({ projectId }),
      savePolicy: (input) => client.agent.settings.savePolicy.mutate(input),
      saveInstructions: (input) => client.agent.settings.saveInstructions.mutate(input),
      allowances: (input) => client.agent.allowances.list.query(input),
      revokeAllowance: (input) => client.agent.allowances.revoke.mutate(input),
    }),
    [client],
  );
}

/** A failed call: its stable code (the app code, else the tRPC code) and its message. */
export function failureOf(err: unknown, fallback: string): { code: string | undefined; message: string } {
  const data = (err as { data?: { appCode?: unknown; code?: unknown } } | null)?.data;
  const code =
    typeof data?.appCode === 'string' ? data.appCode : typeof data?.code === 'string' ? data.code : undefined;
  const m = (err as { message?: unknown } | null)?.message;
  return { code, message: typeof m === 'string' && m && code ? m : fallback };
}

/** "2026-11-26 14:05 UTC": the same on the server and in the browser (no time zone of either). */
export function formatWhen(d: Date | string | null | undefined): string {
  if (!d) return '';
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

export const ui = {
  primary:
    'inline-flex items-center justify-center gap-1 rounded-md bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800 disabled:cursor-not-allowed disabled:opacity-60 dark:bg-blue-600 dark:hover:bg-blue-500',
  secondary:
    'inline-flex items-center justify-center gap-1 rounded-md border border-slate-300 px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800',
  field:
    'rounded-md border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 disabled:cursor-not-allowed disabled:bg-slate-100 disabled:text-slate-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100 dark:disabled:bg-slate-800 dark:disabled:text-slate-300',
  help: 'text-sm text-slate-600 dark:text-slate-400',
  notice:
    'rounded-md border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100',
  alert:
    'rounded-md border border-red-300 bg-red-50 p-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100',
  confirm:
    'space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-50',
} as const;
