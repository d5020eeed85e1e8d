/**
 * One run's tool policy, computed once when the run opens from who asks and the project's tool
 * permissions the open statement read: which of the assistant's tools the model may see (RBAC
 * first: what the role grants; then the project's "not available"), which calls need a person's
 * decision (approval second: the role's choice for the tool and its argument rules, the embedder's
 * extra approvals, tools that always ask, the data-flow guard, and what the user allowed for the
 * rest of the conversation; never wider than the role), and whether an approved call may still run
 * (the role is read again for a resume). Everything in a run that decides about tools asks this
 * object; nothing reads process-wide settings for it.
 *
 * The ceilings of the tool permissions (what each role may be given) are here too, so the settings
 * page, a save and a run all hold a cell within the same bounds.
 */
import { type AccessSubject, hasProjectAccess, MCP_TOOL_METADATA, type Scope } from '../host';
import {
  declarationOf,
  isLocalTool,
  LOCAL_TOOL_DECLARATIONS,
  LOCAL_TOOL_NAMES,
  type LocalToolDeclaration,
} from '../tool-declarations';
import {
  type CellCeiling,
  cellOf,
  decideCall,
  DEFAULT_POLICY,
  type PolicyChoice,
  ROLES,
  type Role,
  type ToolPolicy,
} from '../tool-policy';
import { type ApprovalDecision, approvalFor, effectiveToolInfo, type Taint, toolInfo } from './tools';

export interface RunToolPolicy {
  readonly subject: AccessSubject;
  /** The project's tool permissions the run goes by (0: none saved, the defaults). */
  readonly version: number;
  /** The product's MCP tools offered to the model: granted by the role and not "not available". */
  readonly mcpTools: ReadonlySet<string>;
  /** The tools the role grants, as one key (tool listings are cached per key). */
  readonly grantKey: string;
  /** Tools the user allowed for the rest of this conversation (under this version). */
  readonly allowedInConversation: ReadonlySet<string>;
  /** Whether the model is offered `name` (an MCP or a local tool). */
  offers(name: string): boolean;
  /**
   * Whether a call of `name` needs a decision now, and why (`taint`: what the run has read; `args`:
   * the call's arguments, for the tool's argument rules).
   */
  approval(name: string, taint: Taint, args?: Record<string, unknown>): ApprovalDecision;
  /** Whether the role may run `name` at all (checked again before an approved call runs). */
  mayRun(name: string): boolean;
  /** Whether an approval of `name` may be answered "always allow in this conversation". */
  canAlwaysAllow(name: string): boolean;
  /** The same policy with `names` allowed for the rest of the conversation (answered in this run's resume). */
  allowing(names: Iterable<string>): RunToolPolicy;
}

export interface PolicyOptions {
  /** Tools that need approval on top of their declaration (the embedder's; can only tighten). */
  requireApproval?: ReadonlySet<string>;
  /** The project's tool permissions (the newest version when the run opened); none: the defaults. */
  project?: { version: number; policy: ToolPolicy };
  /** Tools always allowed in this conversation under that version. */
  allowed?: Iterable<string>;
}

/** A tool of the assistant as the tool permissions list it. */
export interface PolicyTool {
  name: string;
  /** Its name for people. */
  title: string;
  /** Runs in the assistant's server (navigate, search_docs), not through the MCP endpoint. */
  local: boolean;
  /** The scope the role needs (MCP tools); local tools need none beyond using the assistant. */
  scope: Scope | null;
  /** Destructive or outward: never runs without asking. */
  alwaysAsks: boolean;
  ceilings: Readonly<Record<Role, CellCeiling>>;
}

function ceilingFor(
  scope: Scope | null,
  declared: 'auto' | 'approval' | 'always',
  asksItself: boolean,
  role: Role,
): CellCeiling {
  const granted = scope === null || hasProjectAccess({ role }, scope);
  const alwaysAsks = declared === 'always';
  const dflt: PolicyChoice = !granted ? 'off' : declared === 'auto' ? 'auto' : 'ask';
  return { granted, alwaysAsks, asksItself, default: dflt };
}

/** A tool whose call is a question to the user (it declares an interrupt of its own: `ask_user`). */
const asksItself = (name: string) =>
  isLocalTool(name) &&
  (LOCAL_TOOL_DECLARATIONS[name as (typeof LOCAL_TOOL_NAMES)[number]] as LocalToolDeclaration).interrupt !== undefined;

function ceilingsFor(
  scope: Scope | null,
  declared: 'auto' | 'approval' | 'always',
  name: string,
): Record<Role, CellCeiling> {
  return Object.fromEntries(ROLES.map((role) => [role, ceilingFor(scope, declared, asksItself(name), role)])) as Record<
    Role,
    CellCeiling
  >;
}

/** Every tool of the assistant (the product's MCP tools in registry order, then the local ones), with its ceilings. */
export const POLICY_TOOLS: readonly PolicyTool[] = Object.freeze([
  ...MCP_TOOL_METADATA.map((t) => {
    const declared = declarationOf(t.name)?.approval ?? 'approval';
    return {
      name: t.name,
      title: t.title,
      local: false,
      scope: t.scope,
      alwaysAsks: declared === 'always',
      ceilings: ceilingsFor(t.scope, declared, t.name),
    };
  }),
  ...LOCAL_TOOL_NAMES.map((name) => {
    const declared = LOCAL_TOOL_DECLARATIONS[name].approval;
    return {
      name,
      title: LOCAL_TOOL_DECLARATIONS[name].title,
      local: true,
      scope: null,
      alwaysAsks: (declared as string) === 'always',
      ceilings: ceilingsFor(null, declared, name),
    };
  }),
]);
const TOOL_BY_NAME = new Map(POLICY_TOOLS.map((t) => [t.name, t]));
export const POLICY_TOOL_NAMES: readonly string[] = POLICY_TOOLS.map((t) => t.name);

/** The ceilings of a tool by role (undefined: not a tool of the assistant). */
export function ceilingsOf(tool: string): Readonly<Record<Role, CellCeiling>> | undefined {
  return TOOL_BY_NAME.get(tool)?.ceilings;
}

const NOT_GRANTED: CellCeiling = { granted: false, alwaysAsks: false, asksItself: false, default: 'off' };

/** The tool policy of a run whose user is `subject`. */
export function runToolPolicy(subject: AccessSubject, opts: PolicyOptions = {}): RunToolPolicy {
  const project = opts.project ?? { version: 0, policy: DEFAULT_POLICY };
  const requireApproval = opts.requireApproval ?? new Set<string>();
  const role = subject.role;
  const cell = (name: string): PolicyChoice => {
    const ceiling = role ? (ceilingsOf(name)?.[role] ?? NOT_GRANTED) : NOT_GRANTED;
    return cellOf(project.policy, name, role ?? 'VIEWER', ceiling);
  };
  const granted: string[] = MCP_TOOL_METADATA.filter((t) => hasProjectAccess(subject, t.scope)).map((t) => t.name);
  const mcpTools = new Set(granted.filter((name) => cell(name) !== 'off'));
  const offers = (name: string) => (isLocalTool(name) ? cell(name) !== 'off' : mcpTools.has(name));
  const canAlwaysAllow = (name: string) =>
    offers(name) && toolInfo(name)?.alwaysAsk !== true && !requireApproval.has(name);

  const build = (allowed: ReadonlySet<string>): RunToolPolicy => ({
    subject,
    version: project.version,
    mcpTools,
    grantKey: [...granted].sort().join(','),
    allowedInConversation: allowed,
    offers,
    approval: (name, taint, args) => {
      const info = effectiveToolInfo(name, requireApproval);
      if (!info) return approvalFor(undefined, taint);
      const choice = cell(name);
      if (choice === 'off') {
        return { required: true, reason: 'policy', why: 'This tool is not available to your role in this project.' };
      }
      // The role's choice and the argument rules; tools that always ask and the embedder's extra
      // approvals can never run unasked; an "always allow" of the user stands in for an approval.
      let decided = info.alwaysAsk ? 'ask' : decideCall(project.policy, name, choice, args);
      if (decided === 'auto' && requireApproval.has(name)) decided = 'ask';
      if (decided === 'ask' && allowed.has(name) && canAlwaysAllow(name)) decided = 'auto';
      const decision = approvalFor({ ...info, policy: decided === 'auto' ? 'auto' : 'approval' }, taint);
      if (!decision.required) return decision;
      // Held by the project's choice for a tool that would otherwise run on its own.
      const byPolicy = decision.reason !== 'data_flow' && toolInfo(name)?.policy === 'auto';
      return {
        ...(byPolicy
          ? {
              required: true,
              reason: 'policy' as const,
              why: "This project's tool permissions ask for your approval before the assistant uses this tool.",
            }
          : decision),
        ...(decision.reason !== 'data_flow' && canAlwaysAllow(name) ? { alwaysAllowable: true } : {}),
      };
    },
    mayRun: (name) => {
      if (isLocalTool(name)) return offers(name);
      const scope = TOOL_BY_NAME.get(name)?.scope;
      return scope !== undefined && scope !== null && hasProjectAccess(subject, scope) && offers(name);
    },
    canAlwaysAllow,
    allowing: (names) => build(new Set([...allowed, ...names])),
  });
  return build(new Set(opts.allowed ?? []));
}
