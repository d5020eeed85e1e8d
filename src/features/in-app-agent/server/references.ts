/**
 * References to the product's objects, checked on the server for one run, with the run's
 * permissions:
 * - in answers: once an assistant message has ended, the issues it names ("#12", "issue 12", links
 *   to an issue page; `issue-references.ts`) are looked up in one query and those that exist in the
 *   project, for a user whose role may read issues, go out as `CUSTOM_EVENTS.references` (stored and
 *   replayed like any event). The panel links only these; anything else stays plain text.
 * - in the user's message: the issues and members picked in the composer (`reference` parts) are
 *   kept only when they exist in the project; the model gets them with their ids.
 * Each issue is read at most once per run (the run's cache, dropped with the run). A failed check
 * is logged and leaves the text plain: it never fails the answer.
 */
import {
  type AccessSubject,
  childLog,
  describeError,
  driverOf,
  env,
  hasProjectAccess,
  Prisma,
  type PrismaClient,
} from '../host';
import { CUSTOM_EVENTS } from '../constants';
import { issueNumbersIn } from '../issue-references';
import type { AgentEvent, IssueReference, MessagePart } from '../schema';

type ReferencePart = Extract<MessagePart, { type: 'reference' }>;

/** The app's own origins (an absolute link there is a product page): the configured public URL. */
function appOrigins(): string[] {
  try {
    const url = env().NEXTAUTH_URL;
    return url ? [new URL(url).origin] : [];
  } catch {
    return [];
  }
}

/** The issues and members one run has checked; one per run, gone with it. */
export class RunReferences {
  private readonly issuesByNumber = new Map<number, IssueReference | null>();
  private knownOrigins: readonly string[] | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    readonly projectId: string,
    private readonly subject: AccessSubject,
    origins?: readonly string[],
  ) {
    this.knownOrigins = origins;
  }

  /** The app's own origins, read when a message is first checked. */
  get origins(): readonly string[] {
    this.knownOrigins ??= appOrigins();
    return this.knownOrigins;
  }

  /** Whether the run's user may read the project's issues (or members) at all. */
  private may(scope: 'issues:read' | 'members:read'): boolean {
    return hasProjectAccess(this.subject, scope);
  }

  /** The issues of `numbers` that exist in the project and the user may read (one query for those not yet known). */
  async issues(numbers: readonly number[]): Promise<IssueReference[]> {
    if (!numbers.length || !this.may('issues:read')) return [];
    const unknown = numbers.filter((n) => !this.issuesByNumber.has(n));
    if (unknown.length) {
      // On the run's path: one statement straight to the driver (ints and text only).
      const rows = await driverOf(this.prisma).queryRows<{ number: number; title: string; status: string }>(Prisma.sql`
        SELECT "number", "title", "status"::text AS "status" FROM "Issue"
        WHERE "projectId" = ${this.projectId} AND "number" = ANY(${unknown}::int[])`);
      for (const n of unknown) this.issuesByNumber.set(n, null);
      for (const r of rows)
        this.issuesByNumber.set(r.number, { number: r.number, title: r.title.slice(0, 300), status: r.status });
    }
    return numbers.map((n) => this.issuesByNumber.get(n)).filter((i): i is IssueReference => Boolean(i));
  }

  /**
   * The reference parts of a user message that name an object of this project the user may read
   * (an issue by its number, a member by their user id); the others are dropped (their text stays).
   */
  async checkParts(parts: readonly MessagePart[]): Promise<MessagePart[]> {
    const refs = parts.filter((p): p is ReferencePart => p.type === 'reference');
    if (!refs.length) return [...parts];
    const issueNumbers = refs
      .filter((r) => r.kind === 'issue' && /^\d{1,7}$/.test(r.id))
      .map((r) => Number(r.id))
      .filter((n) => n > 0);
    const memberIds = refs.filter((r) => r.kind === 'member').map((r) => r.id);
    const [issues, members] = await Promise.all([
      this.issues([...new Set(issueNumbers)]),
      memberIds.length && this.may('members:read')
        ? this.prisma.projectMembership.findMany({
            where: { projectId: this.projectId, userId: { in: [...new Set(memberIds)] } },
            select: { userId: true },
          })
        : Promise.resolve([]),
    ]);
    const okIssues = new Set(issues.map((i) => String(i.number)));
    const okMembers = new Set(members.map((m) => m.userId));
    const seen = new Set<string>();
    return parts.filter((p) => {
      if (p.type !== 'reference') return true;
      const key = `${p.kind}:${p.id}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return p.kind === 'issue' ? okIssues.has(String(Number(p.id))) : okMembers.has(p.id);
    });
  }
}

/**
 * Watches a run's events and, when an assistant message ends, checks the issues it names; the
 * answer goes out as `CUSTOM_EVENTS.references` as soon as nothing is streaming (a run's events
 * touch one message or call at a time: see compact.ts), and at the latest before the run's end
 * (`settle`).
 */
export class ReferenceWatcher {
  private readonly texts = new Map<string, string>();
  private readonly open = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  private ready: AgentEvent[] = [];

  constructor(
    private readonly refs: RunReferences,
    private readonly emit: (e: AgentEvent) => void,
    private readonly ids: { runId: string; conversationId: string },
  ) {}

  /** Called with every event of the run, after it was sent. */
  observe(e: AgentEvent): void {
    switch (e.type) {
      case 'TEXT_MESSAGE_START':
        this.open.add(e.messageId);
        if (e.role === 'assistant') this.texts.set(e.messageId, '');
        break;
      case 'TEXT_MESSAGE_CONTENT': {
        const text = this.texts.get(e.messageId);
        if (text !== undefined) this.texts.set(e.messageId, text + e.delta);
        break;
      }
      case 'TEXT_MESSAGE_END': {
        this.open.delete(e.messageId);
        const text = this.texts.get(e.messageId);
        this.texts.delete(e.messageId);
        if (text) this.check(e.messageId, text);
        break;
      }
      case 'TOOL_CALL_START':
        this.open.add(e.toolCallId);
        break;
      case 'TOOL_CALL_END':
        this.open.delete(e.toolCallId);
        break;
      case 'RUN_FINISHED':
      case 'RUN_ERROR':
        this.open.clear();
        break;
      default:
        break;
    }
    this.flush();
  }

  private check(messageId: string, text: string): void {
    const numbers = issueNumbersIn(text, this.refs.projectId, this.refs.origins);
    if (!numbers.length) return;
    const done = this.refs
      .issues(numbers)
      .then(
        (issues) => {
          if (issues.length)
            this.ready.push({ type: 'CUSTOM', name: CUSTOM_EVENTS.references, value: { messageId, issues } });
          this.flush();
        },
        (err: unknown) => {
          // ops: the answer keeps its references as plain text.
          childLog(this.ids).warn(
            { event: 'references.check_failed', count: numbers.length, error: describeError(err) },
            'could not check the references of an answer',
          );
        },
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Sends the checked references when nothing is streaming. */
  private flush(): void {
    if (this.open.size > 0 || !this.ready.length) return;
    const out = this.ready;
    this.ready = [];
    for (const e of out) this.emit(e);
  }

  /** Waits for the checks still running and sends what they found (before the run's end). */
  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
    this.open.clear();
    this.flush();
  }
}
