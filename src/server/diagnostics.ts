/**
 * Process diagnostics: what a long-running server accumulates. Signal and exit listeners, active
 * handles (sockets, timers, servers), async-local storages in use, memory, CPU, and the sizes of
 * the registries the product keeps (live runs, watchers, caches). A run must leave every one of
 * them where it found it; the soak benchmark and a regression test read them here.
 *
 * Served by `GET /api/diagnostics` only when DIAGNOSTICS_TOKEN is set (and the request carries
 * it); otherwise nothing is exposed.
 */
import 'server-only';
import { AsyncLocalStorage } from 'node:async_hooks';
import { processWide } from '@/server/process-wide';

/** Process events whose listeners a per-run object could leave behind. */
const WATCHED_EVENTS = [
  'SIGTERM',
  'SIGINT',
  'SIGHUP',
  'exit',
  'beforeExit',
  'uncaughtException',
  'unhandledRejection',
  'warning',
] as const;

interface Holder {
  gauges: Map<string, () => number>;
  /** Async-local storages enabled and not disabled since the tracker was installed (null: untracked). */
  storages: number | null;
}
const holder: Holder = processWide<Holder>('__trackerDiagnostics', () => ({ gauges: new Map(), storages: null }));

/**
 * Counts async-local storages as they are enabled and disabled. On Node 20 every storage that was
 * ever used stays in a process-wide list until `disable()`, and every promise walks that list: a
 * storage created per run makes every later run slower. Node 20 implements this with
 * `_enable`/`disable` on the prototype; where a runtime does not, the count stays null. Installed
 * once per process, as early as possible (instrumentation, test set-up).
 */
export function trackAsyncLocalStorages(): void {
  if (holder.storages !== null) return;
  const proto = AsyncLocalStorage.prototype as unknown as {
    _enable?: () => void;
    disable: () => void;
    enabled?: boolean;
  };
  const enable = proto._enable;
  if (typeof enable !== 'function') return;
  const disable = proto.disable;
  holder.storages = 0;
  proto._enable = function (this: { enabled?: boolean }) {
    const was = this.enabled === true;
    enable.call(this);
    if (!was && this.enabled === true) holder.storages! += 1;
  };
  proto.disable = function (this: { enabled?: boolean }) {
    const was = this.enabled === true;
    disable.call(this);
    if (was && this.enabled !== true) holder.storages! -= 1;
  };
}

/** Registers a size the product keeps (once per process; the latest registration of a name wins). */
export function registerGauge(name: string, read: () => number): void {
  holder.gauges.set(name, read);
}

export interface Diagnostics {
  pid: number;
  uptimeSeconds: number;
  node: string;
  memory: { rssBytes: number; heapUsedBytes: number; externalBytes: number };
  cpu: { userMicros: number; systemMicros: number };
  /** Listeners per watched process event. */
  processListeners: Record<string, number>;
  /** Active handles and requests, by type (`process.getActiveResourcesInfo()`). */
  activeResources: Record<string, number>;
  activeResourcesTotal: number;
  /** Async-local storages in use (null: this runtime cannot be tracked). */
  asyncLocalStorages: number | null;
  /** Registries the product keeps (live runs, watchers, caches). */
  registries: Record<string, number>;
}

export function readDiagnostics(): Diagnostics {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  const resources: Record<string, number> = {};
  const info = process.getActiveResourcesInfo();
  for (const type of info) resources[type] = (resources[type] ?? 0) + 1;
  const registries: Record<string, number> = {};
  for (const [name, read] of holder.gauges) registries[name] = read();
  return {
    pid: process.pid,
    uptimeSeconds: Math.round(process.uptime()),
    node: process.version,
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, externalBytes: mem.external },
    cpu: { userMicros: cpu.user, systemMicros: cpu.system },
    processListeners: Object.fromEntries(WATCHED_EVENTS.map((e) => [e, process.listenerCount(e)])),
    activeResources: resources,
    activeResourcesTotal: info.length,
    asyncLocalStorages: holder.storages,
    registries,
  };
}
