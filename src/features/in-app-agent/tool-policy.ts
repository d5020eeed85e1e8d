/**
 * A project's tool permissions: for each of the assistant's tools and each role, one choice (runs
 * without asking, asks for approval, not available), and, for tools that declare the fields
 * (`tool-declarations.ts` `rules`), argument rules that make some calls run without asking or ask.
 * The typed policy (`ToolPolicySchema`, stored as one version's jsonb and checked on write and on
 * read), how a cell and a call are decided within a tool's ceiling, what a save may not say, and
 * what changed between two versions. Pure and isomorphic: the server decides with it (`server/
 * policy.ts`, which knows the ceilings: RBAC and the approval classes) and the settings page shows
 * and edits it.
 */
import { z } from 'zod';
import { declarationOf } from './tool-declarations';

/**
 * The project roles, most authority first: the columns of the tool permissions. The host's roles:
 * `server/policy.ts` hands the host's role to these ceilings and these roles to the host's RBAC
 * check, so it fails to build while the two lists differ.
 */
export const ROLES = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

/** How each role reads in the settings and the audit page. */
export const ROLE_LABELS: Record<Role, string> = { OWNER: 'Owner', ADMIN: 'Admin', MEMBER: 'Member', VIEWER: 'Viewer' };

export const POLICY_CHOICES = ['auto', 'ask', 'off'] as const;
export type PolicyChoice = (typeof POLICY_CHOICES)[number];

/** How each choice reads in the settings and the audit page. */
export const POLICY_CHOICE_LABELS: Record<PolicyChoice, string> = {
  auto: 'Runs without asking',
  ask: 'Asks for approval',
  off: 'Not available',
};

export const MAX_RULES_PER_TOOL = 10;
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * One argument rule: when a call sets `field` (to `equals`, when given), it runs without asking
 * (`choice: 'auto'`) or asks (`choice: 'ask'`). How rules combine with the cell: `decideCall`.
 */
const PolicyRuleSchema = z
  .object({
    when: z
      .object({
        field: z.string().regex(NAME, 'A field name.'),
        equals: z.string().min(1).max(100).optional(),
      })
      .strict(),
    choice: z.enum(['auto', 'ask']),
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/**
 * The stored policy: only the cells that differ from their default, and the rules per tool. Tools
 * and roles absent go by their default; a tool the product no longer has is ignored.
 */
export const ToolPolicySchema = z
  .object({
    cells: z.record(z.string().regex(NAME, 'A tool name.'), z.partialRecord(z.enum(ROLES), z.enum(POLICY_CHOICES))),
    rules: z.record(z.string().regex(NAME, 'A tool name.'), z.array(PolicyRuleSchema).max(MAX_RULES_PER_TOOL)),
  })
  .strict();
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

export const DEFAULT_POLICY: ToolPolicy = Object.freeze({ cells: {}, rules: {} }) as ToolPolicy;

/** What one role may be given for one tool, and what it gets by default. */
export interface CellCeiling {
  /** The role's scopes grant the tool (RBAC): otherwise the only choice is `off`. */
  granted: boolean;
  /** Destructive or outward: never runs without asking. */
  alwaysAsks: boolean;
  /**
   * The call is itself a question to the user (`ask_user`): asking for approval first would ask
   * twice, so it runs or is not available.
   */
  asksItself: boolean;
  /** Today's behaviour: the declared approval class within RBAC. */
  default: PolicyChoice;
}

/** The choices a cell may hold within its ceiling. */
export function choicesWithin(ceiling: CellCeiling): PolicyChoice[] {
  if (!ceiling.granted) return ['off'];
  if (ceiling.asksItself) return ['auto', 'off'];
  return ceiling.alwaysAsks ? ['ask', 'off'] : [...POLICY_CHOICES];
}

/** A cell as it applies: the stored choice held within the ceiling, else the default. */
export function cellOf(policy: ToolPolicy, tool: string, role: Role, ceiling: CellCeiling): PolicyChoice {
  if (!ceiling.granted) return 'off';
  const choice = policy.cells[tool]?.[role] ?? ceiling.default;
  if (choice === 'ask' && ceiling.asksItself) return 'auto';
  return choice === 'auto' && ceiling.alwaysAsks ? 'ask' : choice;
}

/** An argument value as a rule compares it (`equals` is text: enum values are). */
function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The rules of `tool` that name a field the tool declares (any other could never match). */
function rulesOf(policy: ToolPolicy, tool: string): PolicyRule[] {
  const spec = declarationOf(tool)?.rules;
  if (!spec) return [];
  return (policy.rules[tool] ?? []).filter((r) => Object.hasOwn(spec.fields, r.when.field));
}

/**
 * One call of a tool whose cell is `auto` or `ask`, with its arguments, after the argument rules:
 * - any `ask` rule that matches makes it ask;
 * - in an `auto` cell it otherwise runs without asking;
 * - in an `ask` cell it runs without asking only when it changes something and every field it
 *   changes is matched by an `auto` rule (an argument the tool does not declare counts as a change
 *   no rule covers), so a rule for one field never lets another field change unasked.
 * Without arguments (or rules) the cell decides.
 */
export function decideCall(
  policy: ToolPolicy,
  tool: string,
  cell: 'auto' | 'ask',
  args?: Record<string, unknown>,
): 'auto' | 'ask' {
  const spec = declarationOf(tool)?.rules;
  const rules = rulesOf(policy, tool);
  if (!spec || !rules.length || !args) return cell;
  const sets = (field: string) => Object.hasOwn(args, field) && args[field] !== undefined;
  const matches = (r: PolicyRule) =>
    sets(r.when.field) && (r.when.equals === undefined || valueText(args[r.when.field]) === r.when.equals);
  if (rules.some((r) => r.choice === 'ask' && matches(r))) return 'ask';
  if (cell === 'auto') return 'auto';
  const changed = Object.keys(args).filter((k) => sets(k) && !spec.identifies.includes(k));
  const covered = (field: string) => rules.some((r) => r.choice === 'auto' && r.when.field === field && matches(r));
  return changed.length > 0 && changed.every(covered) ? 'auto' : 'ask';
}

/** A reason a policy cannot be saved, with a stable code. */
export interface PolicyIssue {
  code:
    | 'UNKNOWN_TOOL'
    | 'BEYOND_ROLE'
    | 'ALWAYS_ASKS'
    | 'ASKS_ITSELF'
    | 'RULE_NOT_ALLOWED'
    | 'RULE_FIELD'
    | 'RULE_VALUE';
  tool: string;
  role?: Role;
  message: string;
}

/** The ceilings of a tool by role, or undefined for a tool the assistant does not have. */
export type CeilingOf = (tool: string) => Readonly<Record<Role, CellCeiling>> | undefined;

/**
 * What a save may not say: a tool the assistant does not have, a cell beyond the role's scopes
 * (anything but "not available" where RBAC refuses), "runs without asking" for a tool that always
 * asks, rules for a tool that declares none, on a field it does not declare, or comparing with a
 * value the field cannot take. Empty: the policy may be saved.
 */
export function policyIssues(policy: ToolPolicy, ceilingOf: CeilingOf): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  for (const [tool, cells] of Object.entries(policy.cells)) {
    const ceilings = ceilingOf(tool);
    if (!ceilings) {
      issues.push({ code: 'UNKNOWN_TOOL', tool, message: `The assistant has no tool named ${tool}.` });
      continue;
    }
    for (const role of ROLES) {
      const choice = cells[role];
      if (!choice) continue;
      const ceiling = ceilings[role];
      if (!ceiling.granted && choice !== 'off') {
        issues.push({
          code: 'BEYOND_ROLE',
          tool,
          role,
          message: `The ${role} role cannot use ${tool} (its scopes do not allow it), so it can only be "not available".`,
        });
      } else if (ceiling.alwaysAsks && choice === 'auto') {
        issues.push({
          code: 'ALWAYS_ASKS',
          tool,
          role,
          message: `${tool} deletes data or sends it outside the product: it always asks for approval.`,
        });
      } else if (ceiling.asksItself && choice === 'ask') {
        issues.push({
          code: 'ASKS_ITSELF',
          tool,
          role,
          message: `${tool} asks the user a question itself: it runs or is not available, it never asks for approval first.`,
        });
      }
    }
  }
  for (const [tool, rules] of Object.entries(policy.rules)) {
    if (!ceilingOf(tool)) {
      issues.push({ code: 'UNKNOWN_TOOL', tool, message: `The assistant has no tool named ${tool}.` });
      continue;
    }
    const spec = declarationOf(tool)?.rules;
    if (!spec) {
      if (rules.length) issues.push({ code: 'RULE_NOT_ALLOWED', tool, message: `${tool} takes no argument rules.` });
      continue;
    }
    for (const rule of rules) {
      const field = spec.fields[rule.when.field];
      if (!field || !Object.hasOwn(spec.fields, rule.when.field)) {
        issues.push({
          code: 'RULE_FIELD',
          tool,
          message: `A rule of ${tool} names ${rule.when.field}; rules may name ${Object.keys(spec.fields).join(', ')}.`,
        });
      } else if (rule.when.equals !== undefined && !field.values?.includes(rule.when.equals)) {
        issues.push({
          code: 'RULE_VALUE',
          tool,
          message: field.values
            ? `A rule of ${tool} compares ${rule.when.field} with ${rule.when.equals}; it can be ${field.values.join(', ')}.`
            : `A rule of ${tool} can only say that ${rule.when.field} changes, not what it changes to.`,
        });
      }
    }
  }
  return issues;
}

/**
 * The policy as stored: cells equal to their default left out (so a cell nobody changed follows
 * the default), tools and roles in a stable order, empty rule lists dropped. Call on a policy
 * without issues.
 */
export function normalizePolicy(policy: ToolPolicy, ceilingOf: CeilingOf): ToolPolicy {
  const cells: ToolPolicy['cells'] = {};
  for (const tool of Object.keys(policy.cells).sort()) {
    const ceilings = ceilingOf(tool);
    if (!ceilings) continue;
    const row: Partial<Record<Role, PolicyChoice>> = {};
    for (const role of ROLES) {
      const choice = policy.cells[tool]?.[role];
      if (choice && choice !== ceilings[role].default) row[role] = choice;
    }
    if (Object.keys(row).length) cells[tool] = row;
  }
  const rules: ToolPolicy['rules'] = {};
  for (const tool of Object.keys(policy.rules).sort()) {
    const list = policy.rules[tool] ?? [];
    if (list.length) rules[tool] = list.map((r) => ({ when: { ...r.when }, choice: r.choice }));
  }
  return { cells, rules };
}

export const PolicyChangesSchema = z.object({
  cells: z.array(
    z.object({ tool: z.string(), role: z.enum(ROLES), from: z.enum(POLICY_CHOICES), to: z.enum(POLICY_CHOICES) }),
  ),
  rules: z.array(z.object({ tool: z.string(), from: z.array(PolicyRuleSchema), to: z.array(PolicyRuleSchema) })),
});
/** What a save changed: each cell whose effective choice changed, and each tool whose rules did. */
export type PolicyChanges = z.infer<typeof PolicyChangesSchema>;

/** The changes from `before` to `after`, for every tool of `tools` (the assistant's, in order). */
export function policyChanges(
  before: ToolPolicy,
  after: ToolPolicy,
  tools: readonly string[],
  ceilingOf: CeilingOf,
): PolicyChanges {
  const changes: PolicyChanges = { cells: [], rules: [] };
  for (const tool of tools) {
    const ceilings = ceilingOf(tool);
    if (!ceilings) continue;
    for (const role of ROLES) {
      const from = cellOf(before, tool, role, ceilings[role]);
      const to = cellOf(after, tool, role, ceilings[role]);
      if (from !== to) changes.cells.push({ tool, role, from, to });
    }
    const rulesBefore = before.rules[tool] ?? [];
    const rulesAfter = after.rules[tool] ?? [];
    if (JSON.stringify(rulesBefore) !== JSON.stringify(rulesAfter))
      changes.rules.push({ tool, from: rulesBefore, to: rulesAfter });
  }
  return changes;
}

/** "When Status is CLOSED: runs without asking" (a rule in words, with the tool's field labels). */
export function describeRule(tool: string, rule: PolicyRule): string {
  const label = declarationOf(tool)?.rules?.fields[rule.when.field]?.label ?? rule.when.field;
  const when = rule.when.equals === undefined ? `When ${label} changes` : `When ${label} is set to ${rule.when.equals}`;
  return `${when}: ${rule.choice === 'auto' ? POLICY_CHOICE_LABELS.auto.toLowerCase() : 'asks for approval'}`;
}
