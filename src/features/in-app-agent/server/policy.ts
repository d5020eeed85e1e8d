/**
 * One run's tool policy, computed once when the run opens from who asks: which of the product's
 * tools the model may see (RBAC first: what the role grants), which calls need a person's
 * decision (approval second: the declared approval class, the embedder's extra approvals, the
 * data-flow guard; never wider than the role), and whether an approved call may still run (the
 * role is read again for a resume). Everything in a run that decides about tools asks this object;
 * nothing reads process-wide settings for it.
 */
import { type AccessSubject, hasProjectAccess, MCP_TOOL_METADATA, type Scope } from '../host';
import { isLocalTool } from '../tool-declarations';
import { type ApprovalDecision, approvalFor, effectiveToolInfo, type Taint } from './tools';

export interface RunToolPolicy {
  readonly subject: AccessSubject;
  /** The product's MCP tools the role grants: the model is offered no other. */
  readonly mcpTools: ReadonlySet<string>;
  /** The tools granted, as one key (tool listings are cached per key). */
  readonly grantKey: string;
  /** Whether a call of `name` needs a decision now, and why (`taint`: what the run has read). */
  approval(name: string, taint: Taint): ApprovalDecision;
  /** Whether the role may run `name` at all (checked again before an approved call runs). */
  mayRun(name: string): boolean;
}

export interface PolicyOptions {
  /** Tools that need approval on top of their declaration (the embedder's; can only tighten). */
  requireApproval?: ReadonlySet<string>;
}

/** The tool policy of a run whose user is `subject`. */
export function runToolPolicy(subject: AccessSubject, opts: PolicyOptions = {}): RunToolPolicy {
  const scopeOf = new Map<string, Scope>(MCP_TOOL_METADATA.map((t) => [t.name, t.scope]));
  const mcpTools = new Set(MCP_TOOL_METADATA.filter((t) => hasProjectAccess(subject, t.scope)).map((t) => t.name));
  return {
    subject,
    mcpTools,
    grantKey: [...mcpTools].sort().join(','),
    approval: (name, taint) => approvalFor(effectiveToolInfo(name, opts.requireApproval), taint),
    mayRun: (name) => {
      if (isLocalTool(name)) return true;
      const scope = scopeOf.get(name);
      return scope !== undefined && hasProjectAccess(subject, scope);
    },
  };
}
