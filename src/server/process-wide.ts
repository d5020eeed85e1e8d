/**
 * Long-lived state shared by the whole process. Next.js can evaluate a server module more than once
 * (route bundles, instrumentation, the dev server's reloads), so a module-level `const` would give
 * each copy its own timers, pools and registries. Each holder lives on `globalThis` under its own
 * name instead, created on first use and reused by every copy of the module.
 */
import 'server-only';

export function processWide<T extends object>(name: string, create: () => T): T {
  const store = globalThis as Record<string, unknown>;
  store[name] ??= create();
  return store[name] as T;
}
