/**
 * What the assistant knows about each tool, declared once: how a call of it is held by default
 * (approval class), the plain-language line an approval card shows, the objects of the product a
 * successful call changes, and how its result renders in the panel. Keyed by the product's MCP tool
 * names (the host's registry: a tool added to or removed from it breaks the build here until it is
 * declared) and by the module's local tools. The MCP registry keeps what the MCP server itself
 * needs (scope, input schema, annotations, data-flow tags); the local tools' inputs and
 * descriptions are declared here. Isomorphic: read by the server (approvals, summaries, changes)
 * and the panel (renderers).
 */
import { z } from 'zod';
import { AskUserInputSchema } from './elicitation';
import type { ProductObject } from './schema';

/**
 * How calls of a tool are held by default: `auto` runs them, `approval` asks first, `always` asks
 * first and no setting can change that (destructive and outward tools).
 */
export type ApprovalClass = 'auto' | 'approval' | 'always';

/**
 * How a tool's result renders in the panel (a renderer of `components/tool-ui`); tools without one
 * render through the generic card.
 */
export type ResultRender = 'issue' | 'issue-list' | 'members' | 'navigation' | 'docs';

/**
 * What the project's argument rules may say about a tool's calls (`tool-policy.ts`): the
 * arguments that only name the object a call acts on, and the fields a call may change that a rule
 * may name, each with the values a rule may compare it to (none: a rule can only say "changes").
 * Any other argument a call sets counts as a change no rule covers.
 */
interface ArgumentRuleSpec {
  identifies: readonly string[];
  fields: Readonly<Record<string, { label: string; values?: readonly string[] }>>;
}

export interface ToolDeclaration {
  approval: ApprovalClass;
  /** Argument rules of the tool policy may name these fields (only tools that declare them take rules). */
  rules?: ArgumentRuleSpec;
  /** The one-line summary of a held call ("Close issue #3"). */
  summary?: (args: Record<string, unknown>) => string;
  /** The objects a successful call changed, from its arguments and result (for the page behind the panel). */
  changes?: (args: Record<string, unknown>, result: Record<string, unknown>) => ProductObject[];
  render?: ResultRender;
  /**
   * What an approval card shows beside the proposal: `issue`, the issue named by `number` as it is
   * now (read on the server when the call is held, `server/human-in-the-loop.ts`).
   */
  preview?: 'issue';
}

export interface LocalToolDeclaration extends ToolDeclaration {
  /** Its name for people (the tool permissions). */
  title: string;
  /** What the model is told the tool does. */
  description: string;
  input: z.ZodObject;
  /**
   * A call of this tool is not run: it ends the run with an interrupt of this kind
   * (`interrupt-kinds.ts`), and the user's answer becomes its result in the resumed run.
   */
  interrupt?: 'user_question';
}

const num = (a: Record<string, unknown>) => String(a.number ?? '?');

/** The issue a changing call touched: its number, wherever the tool's result puts it. */
function issueChanged(args: Record<string, unknown>, result: Record<string, unknown>): ProductObject[] {
  const r = result as { issue?: { number?: unknown }; issueNumber?: unknown; number?: unknown };
  const n = r.issue?.number ?? r.issueNumber ?? r.number ?? args.number;
  return typeof n === 'number' && Number.isInteger(n) ? [{ kind: 'issue', id: String(n) }] : [];
}

/**
 * Every tool of the product's MCP server, declared (`server/tools.ts` reads each registry tool's
 * declaration by the registry's names: a tool without one fails the build there).
 */
export const MCP_TOOL_DECLARATIONS = {
  list_issues: { approval: 'auto', render: 'issue-list' },
  get_issue: { approval: 'auto', render: 'issue' },
  search_issues: { approval: 'auto', render: 'issue-list' },
  list_members: { approval: 'auto', render: 'members' },
  list_labels: { approval: 'auto' },
  get_project_summary: { approval: 'auto' },
  create_issue: {
    approval: 'approval',
    summary: (a) => `Create an issue titled “${String(a.title ?? '')}”`,
    changes: issueChanged,
    render: 'issue',
  },
  update_issue: {
    approval: 'approval',
    preview: 'issue',
    summary: (a) => `Update issue #${num(a)}`,
    changes: issueChanged,
    render: 'issue',
    rules: {
      identifies: ['number'],
      fields: {
        status: { label: 'Status', values: ['OPEN', 'IN_PROGRESS', 'CLOSED'] },
        priority: { label: 'Priority', values: ['LOW', 'MEDIUM', 'HIGH', 'URGENT'] },
        title: { label: 'Title' },
        body: { label: 'Description' },
        labels: { label: 'Labels' },
      },
    },
  },
  add_comment: { approval: 'approval', summary: (a) => `Comment on issue #${num(a)}`, changes: issueChanged },
  assign_issue: {
    approval: 'approval',
    preview: 'issue',
    summary: (a) => `Assign issue #${num(a)}`,
    changes: issueChanged,
    render: 'issue',
  },
  close_issue: {
    approval: 'approval',
    preview: 'issue',
    summary: (a) => `Close issue #${num(a)}`,
    changes: issueChanged,
    render: 'issue',
  },
  delete_issue: {
    approval: 'always',
    preview: 'issue',
    summary: (a) => `Delete issue #${num(a)} permanently`,
    changes: issueChanged,
  },
  notify_webhook: { approval: 'always', summary: () => "Send a message to the project's webhook" },
} as const satisfies Record<string, ToolDeclaration>;

/** The names of the declared MCP tools (the registry's). */
type DeclaredMcpTool = keyof typeof MCP_TOOL_DECLARATIONS;

/** Local tools: run in the assistant's server, not through the MCP endpoint. */
export const LOCAL_TOOL_DECLARATIONS = {
  navigate: {
    approval: 'auto',
    title: 'Open a page',
    description:
      "Open a page of this project in the user's browser: the issue list, one issue (with issueNumber), the new-issue form, members or settings.",
    input: z
      .object({
        page: z.enum(['issues', 'issue', 'new_issue', 'members', 'settings']),
        issueNumber: z.number().int().positive().max(10_000_000).optional(),
      })
      .strict(),
    render: 'navigation',
  },
  search_docs: {
    approval: 'auto',
    title: 'Search the help pages',
    description:
      "Search the product's help pages (how to use issues, roles, API keys, the MCP server and this assistant).",
    input: z.object({ query: z.string().min(1).max(200) }).strict(),
    render: 'docs',
  },
  ask_user: {
    approval: 'auto',
    title: 'Ask you a question',
    interrupt: 'user_question',
    description:
      'Ask the user a question and wait for the answer instead of guessing: when a request is ambiguous (several ' +
      'issues or people match, a value you need is missing) or the choice is theirs to make. `message` is the ' +
      'question; `requestedSchema` is the answer form (flat fields; for a choice, a string enum of the options you ' +
      "found with the other tools, with enumNames as their labels). The answer is this call's result: " +
      '{action: "accept", content: {field: value}}, or {action: "decline"} or {action: "expired"} when the user ' +
      'did not answer; then do not guess.',
    input: AskUserInputSchema,
  },
} as const satisfies Record<string, LocalToolDeclaration>;

export type LocalToolName = keyof typeof LOCAL_TOOL_DECLARATIONS;
export const LOCAL_TOOL_NAMES = Object.keys(LOCAL_TOOL_DECLARATIONS) as LocalToolName[];

export function isLocalTool(name: string): name is LocalToolName {
  return Object.hasOwn(LOCAL_TOOL_DECLARATIONS, name);
}

/** A tool's declaration (MCP or local), or undefined for a tool the module does not know. */
export function declarationOf(name: string): ToolDeclaration | undefined {
  if (isLocalTool(name)) return LOCAL_TOOL_DECLARATIONS[name];
  return Object.hasOwn(MCP_TOOL_DECLARATIONS, name) ? MCP_TOOL_DECLARATIONS[name as DeclaredMcpTool] : undefined;
}

/** The summary line of a held call of `name`. */
export function summarizeCall(name: string, args: Record<string, unknown>): string {
  return declarationOf(name)?.summary?.(args) ?? `Run ${name}`;
}

/** The objects a successful call of `name` changed (none for failures and read-only tools). */
export function changedObjects(name: string, args: Record<string, unknown>, result: unknown): ProductObject[] {
  const changes = declarationOf(name)?.changes;
  if (!changes || !result || typeof result !== 'object' || (result as { isError?: unknown }).isError === true)
    return [];
  return changes(args, result as Record<string, unknown>);
}
