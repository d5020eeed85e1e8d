/**
 * The offline demo model: deterministic, no network. It understands a documented handful of
 * requests about issues, calls the real tools for them (so RBAC, approvals and audit all apply),
 * and otherwise explains that it is the demo model and how to configure a real one.
 *
 * Understood requests (case-insensitive):
 *   list open issues | list closed issues | list all issues   (add "unassigned": only issues of no one)
 *   show issue 3 | summarize issue 3
 *   summarize the project
 *   create an issue titled <title>
 *   close issue 3 | delete issue 3
 *   assign issue 3   (lists the members, then asks whom with ask_user: a choice among them; then
 *     assigns once approved)
 *   assign issue 3 to <part of a name or email>   (one match: assigns; several or none: asks whom)
 *   create an issue   (no title: asks for the title and the priority with ask_user, then creates it)
 *   close issues 3 and 4   (one held call per issue: a batch of approvals)
 *   comment on issue 3: <text>
 *   go to issue 3 | go to the issues page | go to members
 *   notify the webhook: <message>
 *   search docs for <words> | how do I <...>
 *   what did I ask before   (lists the earlier user messages it was given: the history it sees)
 *   write a long answer   (streams slowly; useful to try the Stop button)
 *   fail twice, then answer <anything>   (the first answers to that exact message break off like
 *     an overloaded provider's; once, twice or "3 times"; useful to try Retry)
 *   show me an unsafe answer   (markdown with raw HTML and a javascript: link, rendered inert)
 *   (any message with attachments)   says what it received: an image's size in pixels, a file's size
 */
import type { RuntimeModel } from './runtime-model';
import { loadSharp } from './sharp';

type Part =
  | { type: 'stream-start'; warnings: [] }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  | {
      type: 'finish';
      finishReason: 'stop' | 'tool-calls';
      usage: { inputTokens: number; outputTokens: number; totalTokens: number };
    }
  | { type: 'error'; error: unknown };

interface PromptPart {
  type: string;
  text?: string;
  /** A file part: its bytes and type. */
  data?: unknown;
  mediaType?: string;
  toolName?: string;
  toolCallId?: string;
  output?: { type: string; value: unknown };
}
interface PromptMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | PromptPart[];
}
interface StreamOptions {
  prompt: PromptMessage[];
  tools?: Array<{ name: string }>;
  abortSignal?: AbortSignal;
}

export interface DemoModelOptions {
  /** Delay between streamed words (ms). */
  wordDelayMs?: number;
  /** Delay between words of the long answer (ms). */
  slowWordDelayMs?: number;
}

type ToolCallPlan = { tool: string; args: Record<string, unknown> };
type Plan =
  | { kind: 'text'; text: string; slow?: boolean; fail?: boolean }
  | { kind: 'tool'; tool: string; args: Record<string, unknown>; preface?: string; more?: ToolCallPlan[] };

/** The start command the demo model's help shows for a local Ollama (one line, ready to copy). */
export const DEMO_OLLAMA_COMMAND =
  'AGENT_MODEL_PROVIDER=openai-compatible OPENAI_COMPATIBLE_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_COMPATIBLE_MODEL=llama3.1 npm run dev';

const HELP =
  "I'm the **demo model**: I run offline and understand a few requests about this project's issues. Try:\n\n" +
  '- "list open issues"\n- "summarize issue 1"\n- "summarize the project"\n- "create an issue titled Fix the login page"\n- "close issue 2"\n- "assign issue 1" (I ask you whom)\n- "go to issue 1"\n\n' +
  'To use a real model, set `AGENT_MODEL_PROVIDER=bedrock` (with `AWS_REGION` and credentials) or ' +
  '`AGENT_MODEL_PROVIDER=openai-compatible` with `OPENAI_COMPATIBLE_BASE_URL` and `OPENAI_COMPATIBLE_MODEL` (Ollama, vLLM, LM Studio, OpenAI). ' +
  'For example, with a local Ollama:\n\n' +
  '```bash\n' +
  DEMO_OLLAMA_COMMAND +
  '\n```\n\nSee the README.';

const LONG_ANSWER = Array.from(
  { length: 12 },
  (_, i) =>
    `${i + 1}. A good issue tracker keeps every piece of work visible, owned and small enough to finish. ` +
    'Each issue states the problem, the expected outcome and how to check it, so anyone on the team can pick it up.',
).join('\n\n');

const UNSAFE_ANSWER =
  'Here is some content that must render inert:\n\n<img src=x onerror="alert(1)">\n\n<script>alert(2)</script>\n\n' +
  '[a javascript link](javascript:alert(3)) and a [safe link](https://example.com).';

/** A text file the server sends inside the message (server/attachments.ts). */
const TEXT_ATTACHMENT = /^<attachment name="([^"]*)" type="([^"]*)">\n([\s\S]*)\n<\/attachment>$/;

function textOf(m: PromptMessage | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  return m.content
    .filter((p) => !(p.type === 'text' && TEXT_ATTACHMENT.test(p.text ?? '')))
    .map((p) => p.text ?? '')
    .join('');
}

const unescapeAttr = (s: string) => s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

/**
 * What the demo model says about the files of a message: an image's size in pixels (read from its
 * bytes), a PDF's size, a text file's length. Null when the message attaches nothing.
 */
async function describeAttachments(m: PromptMessage | undefined): Promise<string | null> {
  if (!m || typeof m.content === 'string') return null;
  const seen: string[] = [];
  for (const p of m.content) {
    if (p.type === 'file' && p.mediaType?.startsWith('image/')) {
      const sharp = await loadSharp();
      const meta = await sharp(bytesOf(p.data))
        .metadata()
        .catch(() => null);
      const size = meta?.width ? `${meta.width}×${meta.pageHeight ?? meta.height}` : 'unknown size';
      seen.push(`an image of ${size} (${p.mediaType.slice('image/'.length).toUpperCase()})`);
    } else if (p.type === 'file') {
      seen.push(
        `a ${p.mediaType === 'application/pdf' ? 'PDF document' : 'file'} of ${bytesOf(p.data).byteLength} bytes`,
      );
    } else if (p.type === 'text') {
      const file = TEXT_ATTACHMENT.exec(p.text ?? '');
      if (file) seen.push(`a text file, ${unescapeAttr(file[1]!)}, of ${file[3]!.length} characters`);
    }
  }
  if (!seen.length) return null;
  return `I received ${seen.join(', ')}. I'm the demo model: I can tell what was attached, not what it shows.`;
}

function bytesOf(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (typeof data === 'string') return Buffer.from(data.replace(/^data:[^,]*,/, ''), 'base64');
  return new Uint8Array(0);
}

/** The prompt's size in tokens, roughly (an attachment's bytes count as their size, not as JSON). */
function promptTokens(prompt: PromptMessage[]): number {
  const text = JSON.stringify(prompt, (_key, value: unknown) =>
    value instanceof Uint8Array ? `(${value.byteLength} bytes)` : value,
  );
  return Math.ceil(text.length / 4);
}

/** A call of `tool` when the user's role offers it, else the explanation why not. */
function needTool(tools: Set<string>, tool: string, args: Record<string, unknown>, preface?: string): Plan {
  return tools.has(tool)
    ? { kind: 'tool', tool, args, ...(preface ? { preface } : {}) }
    : {
        kind: 'text',
        text: `Your role in this project doesn't allow that (the \`${tool}\` tool is not available to you), so I can't do it.`,
      };
}

/** "assign issue 3" (whom is missing) or "assign issue 3 to al" (whom may match several people). */
const ASSIGN = /\bassign issue\s*#?(\d+)(?:\s+to\s+(.+?))?\s*[.!?]?\s*$/i;
/** "create an issue" with no title: the title and the priority are asked for. */
const CREATE_BARE = /^\s*(?:please\s+)?create (?:an? )?(?:new )?issue\s*[.!?]?\s*$/i;
const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'];

interface MemberLike {
  userId: string;
  name: string;
  email: string;
}

function membersOf(value: unknown): MemberLike[] {
  const list = findKey(value, 'members');
  if (!Array.isArray(list)) return [];
  return list.filter(
    (m): m is MemberLike =>
      !!m && typeof m.userId === 'string' && typeof m.name === 'string' && typeof m.email === 'string',
  );
}

/** The question "who should take issue N?", a choice among `members`. */
function askWhom(number: number, members: MemberLike[], wanted?: string): Plan {
  return {
    kind: 'tool',
    tool: 'ask_user',
    args: {
      message: wanted
        ? `Several members match “${wanted}”. Who should I assign issue #${number} to?`
        : `Who should I assign issue #${number} to?`,
      requestedSchema: {
        type: 'object',
        properties: {
          assignee: {
            type: 'string',
            title: 'Assignee',
            description: 'A member of this project.',
            enum: members.map((m) => m.userId),
            enumNames: members.map((m) => `${m.name} (${m.email})`),
          },
        },
        required: ['assignee'],
      },
    },
  };
}

/** The question for an issue asked for without a title. */
const ASK_NEW_ISSUE: Plan = {
  kind: 'tool',
  tool: 'ask_user',
  args: {
    message: 'What should the new issue say?',
    requestedSchema: {
      type: 'object',
      properties: {
        title: {
          type: 'string',
          title: 'Title',
          description: 'A short summary of the problem or request.',
          minLength: 3,
          maxLength: 200,
        },
        priority: {
          type: 'string',
          title: 'Priority',
          enum: PRIORITIES,
          enumNames: ['Low', 'Medium', 'High', 'Urgent'],
          default: 'MEDIUM',
        },
      },
      required: ['title', 'priority'],
    },
  },
};

/**
 * The step after a tool result, for the requests that take several: the members were listed to
 * assign an issue (assign when one matches, else ask whom), or a question was answered (act on
 * the answer; say what was not done when it was declined or not answered).
 */
function followUp(userText: string, results: PromptPart[], tools: Set<string>): Plan | null {
  // The newest result (the results of one answer's steps may come back together).
  const only = results.at(-1);
  if (!only) return null;
  const value = resultValue(only) as Record<string, unknown> | undefined;
  const assign = ASSIGN.exec(userText.trim());
  if (assign && only.toolName === 'list_members') {
    const number = Number(assign[1]);
    const members = membersOf(value);
    const wanted = assign[2]?.trim();
    const matches = wanted
      ? members.filter((m) => `${m.name} ${m.email}`.toLowerCase().includes(wanted.toLowerCase()))
      : [];
    if (matches.length === 1)
      return needTool(
        tools,
        'assign_issue',
        { number, assignee: matches[0]!.userId },
        `I'll assign issue #${number} to ${matches[0]!.name} once you approve.`,
      );
    if (!members.length) return { kind: 'text', text: 'I could not list the members of this project.' };
    return askWhom(number, matches.length > 1 ? matches : members, matches.length > 1 ? wanted : undefined);
  }
  if (only.toolName !== 'ask_user') return null;
  const accepted = value?.action === 'accept' ? ((value.content ?? {}) as Record<string, unknown>) : null;
  if (assign) {
    const number = Number(assign[1]);
    if (!accepted || typeof accepted.assignee !== 'string')
      return { kind: 'text', text: `All right, I did not assign issue #${number}.` };
    return needTool(tools, 'assign_issue', { number, assignee: accepted.assignee }, `I'll assign it once you approve.`);
  }
  if (CREATE_BARE.test(userText)) {
    if (!accepted || typeof accepted.title !== 'string')
      return { kind: 'text', text: 'All right, I did not create an issue.' };
    const priority = typeof accepted.priority === 'string' ? { priority: accepted.priority } : {};
    return needTool(
      tools,
      'create_issue',
      { title: accepted.title, ...priority },
      "I'll create that issue once you approve.",
    );
  }
  return null;
}

function planFromUser(text: string, tools: Set<string>): Plan {
  const t = text.trim();
  const lower = t.toLowerCase();
  const num = (re: RegExp) => {
    const m = re.exec(lower);
    return m ? Number(m[1]) : undefined;
  };
  const need = (tool: string, args: Record<string, unknown>, preface?: string): Plan =>
    needTool(tools, tool, args, preface);

  if (lower.includes('long answer')) return { kind: 'text', text: LONG_ANSWER, slow: true };
  if (/\bfail (?:once|twice|\d{1,2} times?),? then answer\b/.test(lower))
    return { kind: 'text', text: 'Answered this time. Retry asked the same question again, in place.' };
  if (lower.includes('unsafe answer')) return { kind: 'text', text: UNSAFE_ANSWER };

  const go = /\b(?:go to|navigate to|take me to|open the)\s+(.+)$/.exec(lower);
  if (go) {
    const target = go[1]!;
    const n = /issue\s*#?(\d+)/.exec(target);
    const page = n
      ? `issue ${n[1]}`
      : /member/.test(target)
        ? 'members'
        : /setting/.test(target)
          ? 'settings'
          : 'issues';
    return need('navigate', n ? { page: 'issue', issueNumber: Number(n[1]) } : { page }, 'Opening it for you.');
  }

  // Ambiguous requests: what is missing is asked for (ask_user) instead of guessed.
  if (CREATE_BARE.test(t)) return tools.has('create_issue') ? ASK_NEW_ISSUE : need('create_issue', {});
  const assign = ASSIGN.exec(t);
  if (assign)
    return tools.has('assign_issue')
      ? need('list_members', {}, 'Let me look at the members first.')
      : need('assign_issue', {});

  const create = /\bcreate (?:an? )?(?:new )?issue(?: (?:titled|called|named))?[:\s]+["“']?(.+?)["”']?\s*$/i.exec(t);
  if (create)
    return need('create_issue', { title: create[1]!.slice(0, 200) }, "I'll create that issue once you approve.");

  const comment = /\bcomment on issue\s*#?(\d+)\s*[:,-]?\s*(.+)$/i.exec(t);
  if (comment)
    return need(
      'add_comment',
      { number: Number(comment[1]), body: comment[2]!.slice(0, 2000) },
      "I'll add that comment once you approve.",
    );

  // Several issues at once: one call per issue in the same step, so they are held as one batch.
  const closeMany = /\bclose issues\s+(#?\d+(?:\s*(?:,|and|&)\s*#?\d+)+)/.exec(lower);
  if (closeMany) {
    const numbers = [...new Set([...closeMany[1]!.matchAll(/\d+/g)].map((m) => Number(m[0])))].slice(0, 10);
    const [first, ...rest] = numbers;
    if (first !== undefined && rest.length > 0) {
      const names = numbers.map((n) => `#${n}`).join(', ');
      const plan = need('close_issue', { number: first }, `I'll close issues ${names} once you approve.`);
      if (plan.kind !== 'tool') return plan;
      return { ...plan, more: rest.map((n) => ({ tool: 'close_issue', args: { number: n } })) };
    }
  }

  const close = num(/\bclose issue\s*#?(\d+)/);
  if (close !== undefined)
    return need('close_issue', { number: close }, `I'll close issue #${close} once you approve.`);

  const del = num(/\bdelete issue\s*#?(\d+)/);
  if (del !== undefined) return need('delete_issue', { number: del }, `Deleting issue #${del} needs your approval.`);

  const show = num(/\b(?:show|summari[sz]e|get|describe|explain|what is|tell me about)\b.*?\bissue\s*#?(\d+)/);
  if (show !== undefined) return need('get_issue', { number: show });

  if (/\bsummari[sz]e\b.*\bproject\b|\bproject (?:summary|status|overview)\b/.test(lower))
    return need('get_project_summary', {});

  const webhook = /\bnotify (?:the )?webhook[:\s]+(.+)$/i.exec(t);
  if (webhook)
    return need('notify_webhook', { message: webhook[1]!.slice(0, 1000) }, "I'll send that once you approve.");

  const docs = /\bsearch (?:the )?(?:help|docs?)(?: for)?\s+(.+)$/i.exec(t) ?? /^(how (?:do|can) i .+)$/i.exec(t);
  if (docs) return need('search_docs', { query: docs[1]!.slice(0, 200) });

  if (/\b(list|show|what are)\b.*\bissues\b/.test(lower)) {
    const status = /\bclosed\b/.test(lower)
      ? 'CLOSED'
      : /\ball\b/.test(lower)
        ? undefined
        : /in progress/.test(lower)
          ? 'IN_PROGRESS'
          : 'OPEN';
    const unassigned = /\bunassigned\b/.test(lower);
    return need('list_issues', { ...(status ? { status } : {}), ...(unassigned ? { unassigned } : {}) });
  }
  return { kind: 'text', text: HELP };
}

interface IssueLike {
  number: number;
  title: string;
  status?: string;
  priority?: string;
  assignee?: unknown;
}

function collectIssues(v: unknown, out: IssueLike[] = [], depth = 0): IssueLike[] {
  if (depth > 5 || v === null || typeof v !== 'object') return out;
  if (Array.isArray(v)) {
    for (const x of v) collectIssues(x, out, depth + 1);
    return out;
  }
  const o = v as Record<string, unknown>;
  if (typeof o.number === 'number' && typeof o.title === 'string') out.push(o as unknown as IssueLike);
  else for (const x of Object.values(o)) collectIssues(x, out, depth + 1);
  return out;
}

function nameOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return (typeof o.name === 'string' ? o.name : undefined) ?? (typeof o.email === 'string' ? o.email : undefined);
  }
  return undefined;
}

function findKey(v: unknown, key: string, depth = 0): unknown {
  if (depth > 5 || v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (key in o) return o[key];
  for (const x of Object.values(o)) {
    const found = findKey(x, key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function answerFromResult(tool: string, value: unknown): string {
  const o = (value ?? {}) as Record<string, unknown>;
  if (o.rejected === true) {
    const fb = typeof o.feedback === 'string' && o.feedback ? ` Your feedback: “${o.feedback}”.` : '';
    return o.expired === true
      ? `That request expired before it was approved, so I did not run \`${tool}\`.`
      : `Understood — I did not run \`${tool}\`.${fb}`;
  }
  if (o.isError === true) {
    const msg = typeof o.error === 'string' ? o.error : typeof o.message === 'string' ? o.message : 'unknown error';
    return `The \`${tool}\` tool failed: ${msg}`;
  }
  switch (tool) {
    case 'list_issues':
    case 'search_issues': {
      const issues = collectIssues(value);
      if (!issues.length) return 'No issues match.';
      const lines = issues.map((i) => {
        const who = nameOf(i.assignee);
        return `- **#${i.number}** ${i.title}${i.priority ? ` · ${String(i.priority).toLowerCase()}` : ''}${who ? ` · ${who}` : ''}`;
      });
      return `Here ${issues.length === 1 ? 'is 1 issue' : `are ${issues.length} issues`}:\n\n${lines.join('\n')}`;
    }
    case 'get_issue': {
      const issue = (collectIssues(value)[0] ?? {}) as IssueLike & { body?: string };
      const body = typeof findKey(value, 'body') === 'string' ? String(findKey(value, 'body')) : '';
      const comments = findKey(value, 'comments');
      const list = Array.isArray(comments) ? (comments as Array<Record<string, unknown>>) : [];
      const external = list.filter((c) => c.untrusted === true || c.external === true).length;
      return [
        `**#${issue.number} ${issue.title}** (${String(issue.status ?? '').toLowerCase()}${issue.priority ? `, ${String(issue.priority).toLowerCase()} priority` : ''})`,
        '',
        body ? `> ${body.slice(0, 300).replace(/\n/g, ' ')}` : '_No description._',
        '',
        `${list.length} comment${list.length === 1 ? '' : 's'}${external ? `, ${external} from outside the team (treated as untrusted)` : ''}.`,
      ].join('\n');
    }
    case 'get_project_summary': {
      const counts = findKey(value, 'byStatus') ?? findKey(value, 'counts');
      const parts =
        counts && typeof counts === 'object'
          ? Object.entries(counts as Record<string, unknown>).map(
              ([k, n]) => `${String(n)} ${k.toLowerCase().replace('_', ' ')}`,
            )
          : [];
      const recent = collectIssues(findKey(value, 'recent') ?? findKey(value, 'recentIssues') ?? []);
      return [
        `**Project summary**${parts.length ? `: ${parts.join(', ')}.` : ''}`,
        ...(recent.length
          ? ['', 'Recently updated:', ...recent.slice(0, 5).map((i) => `- #${i.number} ${i.title}`)]
          : []),
      ].join('\n');
    }
    case 'create_issue': {
      const i = collectIssues(value)[0];
      return i ? `Created issue **#${i.number}** “${i.title}”.` : 'The issue was created.';
    }
    case 'close_issue': {
      const i = collectIssues(value)[0];
      return i ? `Closed issue **#${i.number}** “${i.title}”.` : 'The issue was closed.';
    }
    case 'assign_issue': {
      const i = collectIssues(value)[0];
      const who = nameOf(i?.assignee);
      return i ? `Assigned issue **#${i.number}** “${i.title}” to ${who ?? 'nobody'}.` : 'The issue was assigned.';
    }
    case 'delete_issue':
      return 'The issue was deleted.';
    case 'add_comment':
      return 'Comment added.';
    case 'notify_webhook':
      return 'The webhook was notified.';
    case 'navigate': {
      if (typeof o.href !== 'string') return 'Done.';
      const issue = /\/issues\/(\d+)$/.exec(o.href);
      if (issue) return `Opened [issue #${issue[1]}](${o.href}).`;
      const page = /\/(issues\/new|issues|members|settings)$/.exec(o.href)?.[1];
      return `Opened the ${page === 'issues/new' ? 'new issue form' : `${page ?? 'requested'} page`}.`;
    }
    case 'search_docs': {
      const results = Array.isArray(o.results) ? (o.results as Array<Record<string, unknown>>) : [];
      if (!results.length) return 'I found nothing about that in the help pages.';
      return results
        .slice(0, 3)
        .map((r) => `**${String(r.title)}** — ${String(r.excerpt ?? '')}`)
        .join('\n\n');
    }
    default:
      return 'Done.';
  }
}

/**
 * What the user might ask next after a tool's result (the answer ends with them in a
 * `suggestions` block, as the system prompt asks of every model).
 */
function followUps(tool: string, value: unknown): string[] {
  const o = (value ?? {}) as Record<string, unknown>;
  if (o.rejected === true || o.isError === true) return [];
  const first = collectIssues(value)[0];
  switch (tool) {
    case 'list_issues':
    case 'search_issues':
      return [...(first ? [`Summarize issue #${first.number}`] : []), 'List closed issues', 'Summarize the project'];
    case 'get_issue':
      return first ? [`Go to issue ${first.number}`, 'List open issues'] : [];
    case 'get_project_summary':
      return ['List open issues', 'List closed issues'];
    default:
      return [];
  }
}

function suggestionsBlock(items: string[]): string {
  return items.length ? `\n\n\`\`\`suggestions\n${items.join('\n')}\n\`\`\`` : '';
}

function resultValue(part: PromptPart): unknown {
  const out = part.output;
  if (!out) return undefined;
  if (out.type === 'json' || out.type === 'error-json') return out.value;
  if (typeof out.value === 'string') {
    try {
      return JSON.parse(out.value);
    } catch {
      return { text: out.value };
    }
  }
  return out.value;
}

/**
 * "what did I ask before": the user's earlier messages exactly as the model received them, so the
 * history the server sends (the shown versions only, trimmed to the budget) can be seen.
 */
function recallEarlier(text: string, prompt: PromptMessage[]): Plan | null {
  if (!/\bwhat did i (?:ask|say) (?:before|earlier)\b/i.test(text)) return null;
  const earlier = prompt
    .filter((m) => m.role === 'user')
    .map(textOf)
    .slice(0, -1);
  if (!earlier.length) return { kind: 'text', text: 'You have not asked me anything before this.' };
  const list = earlier.map((t) => `- ${t.replace(/\s+/g, ' ').slice(0, 200)}`).join('\n');
  return { kind: 'text', text: `Before this you asked:\n\n${list}` };
}

let callCounter = 0;

/**
 * "fail twice, then answer …": how many more times each such message fails, in this process
 * (the oldest forgotten past a hundred, so the map stays small).
 */
const failuresLeft = new Map<string, number>();
const FAILURES_KEPT = 100;

/**
 * Whether this answer breaks off like an overloaded provider's (the user asked this message to fail
 * and it has failures left). The break comes inside the stream, after a few words, as a provider's
 * does mid-answer: the runtime does not retry it, so each failure is one failed answer.
 */
function shouldFail(text: string): boolean {
  const m = /\bfail (once|twice|(\d{1,2}) times?),? then answer\b/i.exec(text);
  if (!m) return false;
  const key = text.trim();
  if (!failuresLeft.has(key)) {
    failuresLeft.set(key, m[1]!.toLowerCase() === 'once' ? 1 : m[1]!.toLowerCase() === 'twice' ? 2 : Number(m[2]));
    if (failuresLeft.size > FAILURES_KEPT) failuresLeft.delete(failuresLeft.keys().next().value!);
  }
  const left = failuresLeft.get(key)!;
  if (left <= 0) return false;
  failuresLeft.set(key, left - 1);
  return true;
}

const OVERLOADED = () =>
  Object.assign(new Error('The demo model is overloaded (you asked it to fail).'), { statusCode: 503 });

function plan(opts: StreamOptions): Plan {
  const last = opts.prompt[opts.prompt.length - 1];
  const tools = new Set((opts.tools ?? []).map((t) => t.name));
  const lastUser = [...opts.prompt].reverse().find((m) => m.role === 'user');
  if (last?.role === 'tool' && Array.isArray(last.content)) {
    const results = last.content.filter((p) => p.type === 'tool-result');
    const next = followUp(textOf(lastUser), results, tools);
    if (next) return next;
    const texts = results.map((p) => answerFromResult(p.toolName ?? '', resultValue(p)));
    const offers = results.flatMap((p) => followUps(p.toolName ?? '', resultValue(p))).slice(0, 3);
    return { kind: 'text', text: (texts.join('\n\n') || 'Done.') + suggestionsBlock(offers) };
  }
  return recallEarlier(textOf(lastUser), opts.prompt) ?? planFromUser(textOf(lastUser), tools);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason ?? new Error('aborted'));
      },
      { once: true },
    );
  });

export function createDemoModel(options: DemoModelOptions = {}): RuntimeModel {
  const wordDelay = options.wordDelayMs ?? 8;
  const slowDelay = options.slowWordDelayMs ?? 60;
  return {
    specificationVersion: 'v2',
    provider: 'demo',
    modelId: 'demo',
    supportedUrls: {},
    async doGenerate() {
      throw new Error('The demo model only streams.');
    },
    async doStream(raw: unknown) {
      const opts = raw as StreamOptions;
      const last = opts.prompt.at(-1);
      const attached = last?.role === 'user' ? await describeAttachments(last) : null;
      const p: Plan =
        last?.role === 'user' && shouldFail(textOf(last))
          ? { kind: 'text', text: 'Let me look at the issues and', fail: true }
          : attached
            ? { kind: 'text', text: attached }
            : plan(opts);
      const inputTokens = promptTokens(opts.prompt);
      const stream = new ReadableStream<Part>({
        async start(controller) {
          try {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            const text = p.kind === 'text' ? p.text : p.preface;
            let outputTokens = 0;
            if (text) {
              const id = `t${++callCounter}`;
              controller.enqueue({ type: 'text-start', id });
              const words = text.split(/(?<=\s)/);
              for (const w of words) {
                const delay = p.kind === 'text' && p.slow ? slowDelay : wordDelay;
                if (delay > 0) await sleep(delay, opts.abortSignal);
                controller.enqueue({ type: 'text-delta', id, delta: w });
                outputTokens += 1;
              }
              if (p.kind === 'text' && p.fail) {
                controller.enqueue({ type: 'error', error: OVERLOADED() });
                controller.close();
                return;
              }
              controller.enqueue({ type: 'text-end', id });
            }
            if (p.kind === 'tool') {
              for (const call of [{ tool: p.tool, args: p.args }, ...(p.more ?? [])]) {
                const toolCallId = `call_demo_${Date.now().toString(36)}_${++callCounter}`;
                const input = JSON.stringify(call.args);
                controller.enqueue({ type: 'tool-call', toolCallId, toolName: call.tool, input });
                outputTokens += 10;
              }
            }
            controller.enqueue({
              type: 'finish',
              finishReason: p.kind === 'tool' ? 'tool-calls' : 'stop',
              usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
            });
            controller.close();
          } catch (err) {
            controller.error(err);
          }
        },
      });
      return { stream };
    },
  };
}
