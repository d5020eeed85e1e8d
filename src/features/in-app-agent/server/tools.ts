/**
 * Which tools the model may see (RBAC first), which calls need a human approval (approval
 * second; approval never widens permissions), the data-flow guard, and the local tools. What each
 * tool is (its approval class, summary, changes, renderer) is declared once, in
 * `tool-declarations.ts`; this file reads those declarations with the MCP registry's annotations
 * and data-flow tags.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MCP_TOOL_METADATA, type McpToolName, type PrismaClient } from '../host';
import { CUSTOM_EVENTS } from '../constants';
import type { AgentEvent, ApprovalReason } from '../schema';
import {
  type ApprovalClass,
  LOCAL_TOOL_DECLARATIONS,
  LOCAL_TOOL_NAMES,
  type LocalToolName,
  MCP_TOOL_DECLARATIONS,
  type ToolDeclaration,
} from '../tool-declarations';

type ApprovalPolicy = 'auto' | 'approval';

interface ToolTags {
  readsPrivateData: boolean;
  readsUntrustedContent: boolean;
  communicatesOutside: boolean;
}

export interface ToolInfo {
  name: string;
  readOnly: boolean;
  destructive: boolean;
  tags: ToolTags;
  policy: ApprovalPolicy;
  /** No setting can let it run without asking (declared `always`: destructive or outward). */
  alwaysAsk?: boolean;
}

const NO_TAGS: ToolTags = { readsPrivateData: false, readsUntrustedContent: false, communicatesOutside: false };

/** The approval gate's view of a declared approval class. */
function policyOf(approval: ApprovalClass): Pick<ToolInfo, 'policy' | 'alwaysAsk'> {
  if (approval === 'auto') return { policy: 'auto' };
  return approval === 'always' ? { policy: 'approval', alwaysAsk: true } : { policy: 'approval' };
}

/** A registry tool's declaration: indexed by the registry's names, so a tool without one fails the build. */
function declaredApproval(name: McpToolName): ApprovalClass {
  const declarations: Record<McpToolName, ToolDeclaration> = MCP_TOOL_DECLARATIONS;
  return declarations[name].approval;
}

const MCP_INFO = new Map<string, ToolInfo>(
  MCP_TOOL_METADATA.map((t) => [
    t.name,
    {
      name: t.name,
      readOnly: t.annotations.readOnlyHint === true,
      destructive: t.annotations.destructiveHint === true,
      tags: { ...NO_TAGS, ...t.tags },
      ...policyOf(declaredApproval(t.name)),
    },
  ]),
);

const LOCAL_INFO = new Map<string, ToolInfo>(
  LOCAL_TOOL_NAMES.map((name) => [
    name,
    { name, readOnly: true, destructive: false, tags: NO_TAGS, ...policyOf(LOCAL_TOOL_DECLARATIONS[name].approval) },
  ]),
);

export function toolInfo(name: string): ToolInfo | undefined {
  return MCP_INFO.get(name) ?? LOCAL_INFO.get(name);
}

/**
 * The tool's info with the embedder's extra approvals applied. `requireApproval` can only tighten
 * (auto -> approval); nothing here can turn an approval off.
 */
export function effectiveToolInfo(name: string, requireApproval?: ReadonlySet<string>): ToolInfo | undefined {
  const info = toolInfo(name);
  if (info && info.policy === 'auto' && requireApproval?.has(name)) return { ...info, policy: 'approval' };
  return info;
}

/** What the run has already read, for the data-flow guard. */
export interface Taint {
  privateData: boolean;
  untrustedContent: boolean;
}

export function taintAfter(taint: Taint, toolName: string): Taint {
  const info = toolInfo(toolName);
  if (!info) return taint;
  return {
    privateData: taint.privateData || info.tags.readsPrivateData,
    untrustedContent: taint.untrustedContent || info.tags.readsUntrustedContent,
  };
}

export interface ApprovalDecision {
  required: boolean;
  reason: ApprovalReason;
  why: string;
  /** The user may answer "always allow in this conversation" (the run's policy says so). */
  alwaysAllowable?: boolean;
}

/**
 * Approval second: whether this call of an already-permitted tool needs a human decision. Decided
 * from the tool's info (policy and data-flow tags), so any tool tagged "communicates outside",
 * even one classified auto, is held once the run has read private data and untrusted content.
 * Unknown tools (no info) always need approval.
 */
export function approvalFor(info: ToolInfo | undefined, taint: Taint): ApprovalDecision {
  if (!info) return { required: true, reason: 'mutating', why: 'Unknown tool.' };
  const guard = info.tags.communicatesOutside && taint.privateData && taint.untrustedContent;
  if (info.policy === 'auto' && !guard) return { required: false, reason: 'mutating', why: '' };
  if (info.policy === 'auto' && guard) {
    return {
      required: true,
      reason: 'data_flow',
      why: 'This conversation has read private project data and content written outside the team; this tool sends data outside the product, so it needs your approval.',
    };
  }
  if (info.tags.communicatesOutside) {
    return {
      required: true,
      reason: guard ? 'data_flow' : 'outward',
      why: guard
        ? 'This sends a message outside the product after the conversation read private data and untrusted external content. Check the message carefully.'
        : 'This sends a message outside the product.',
    };
  }
  if (info.destructive) return { required: true, reason: 'destructive', why: 'This permanently deletes data.' };
  return { required: true, reason: 'mutating', why: 'This changes data in the project.' };
}

// ------------------------------------------------------------------------------------------------
// Local tools
// ------------------------------------------------------------------------------------------------

type NavigateInput = { page: 'issues' | 'issue' | 'new_issue' | 'members' | 'settings'; issueNumber?: number };

/**
 * Runs a local tool. `navigate` also asks the browser to open the page (a CUSTOM event) when the
 * target exists. The same path serves calls the model makes directly and calls approved at resume.
 */
export async function runLocalTool(
  name: LocalToolName,
  input: unknown,
  ctx: { prisma: PrismaClient; projectId: string; emit: (e: AgentEvent) => void },
): Promise<unknown> {
  const parsed = LOCAL_TOOL_DECLARATIONS[name].input.safeParse(input);
  if (!parsed.success)
    return { isError: true, error: `Invalid input for ${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  if (name === 'navigate') {
    const res = await resolveNavigation(ctx.prisma, ctx.projectId, parsed.data as NavigateInput);
    if ('href' in res) ctx.emit({ type: 'CUSTOM', name: CUSTOM_EVENTS.navigate, value: { href: res.href } });
    return res;
  }
  // A question is answered by the user (human-in-the-loop.ts), never run.
  if (name === 'ask_user') return { isError: true, error: 'ask_user is answered by the user, not run.' };
  return searchDocs((parsed.data as { query: string }).query);
}

/** Only known routes of this project; an issue must exist. */
async function resolveNavigation(
  prisma: PrismaClient,
  projectId: string,
  input: NavigateInput,
): Promise<{ href: string } | { isError: true; error: string }> {
  const base = `/projects/${encodeURIComponent(projectId)}`;
  switch (input.page) {
    case 'issues':
      return { href: `${base}/issues` };
    case 'new_issue':
      return { href: `${base}/issues/new` };
    case 'members':
      return { href: `${base}/members` };
    case 'settings':
      return { href: `${base}/settings` };
    case 'issue': {
      if (!input.issueNumber) return { isError: true, error: 'issueNumber is required for page "issue".' };
      const found = await prisma.issue.findUnique({
        where: { projectId_number: { projectId, number: input.issueNumber } },
        select: { id: true },
      });
      if (!found) return { isError: true, error: `Issue #${input.issueNumber} does not exist in this project.` };
      return { href: `${base}/issues/${input.issueNumber}` };
    }
  }
}

interface DocSection {
  file: string;
  title: string;
  text: string;
}
let docsCache: Promise<DocSection[]> | undefined;

async function loadDocs(
  dir = path.join(/* turbopackIgnore: true */ process.cwd(), 'docs', 'help'),
): Promise<DocSection[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.md')).sort();
  const sections: DocSection[] = [];
  for (const file of files) {
    const md = await readFile(path.join(dir, file), 'utf8');
    let title = file;
    let buf: string[] = [];
    const push = () => {
      const text = buf.join('\n').trim();
      if (text) sections.push({ file, title, text });
      buf = [];
    };
    for (const line of md.split('\n')) {
      const h = /^#{1,3}\s+(.+)$/.exec(line);
      if (h) {
        push();
        title = h[1]!.trim();
      } else buf.push(line);
    }
    push();
  }
  return sections;
}

/** Searches the product's own help pages (docs/help/*.md) by term overlap. */
async function searchDocs(
  query: string,
): Promise<{ results: Array<{ title: string; page: string; excerpt: string }> }> {
  const sections = await (docsCache ??= loadDocs());
  const terms = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 2 && !['the', 'and', 'how', 'can', 'for', 'what', 'does', 'with'].includes(t));
  const scored = sections
    .map((s) => {
      const hay = `${s.title} ${s.title} ${s.text}`.toLowerCase();
      const score = terms.reduce((n, t) => n + (hay.split(t).length - 1), 0);
      return { s, score };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, 3);
  return {
    results: scored.map(({ s }) => ({
      title: s.title,
      page: s.file.replace(/\.md$/, ''),
      excerpt: s.text.replace(/\s+/g, ' ').slice(0, 400),
    })),
  };
}
