/**
 * The composer's `#` (issues) and `@` (members) typeahead, without React or the DOM: where a mention
 * is being typed, what a key does in the open list (the combobox pattern: arrows move, Enter or Tab
 * picks, Escape closes), how a picked item goes into the text, and which picked items a message
 * still names when it is sent (they travel as `reference` parts, with their ids).
 */
import type { MessagePart } from '../../schema';

type MentionTrigger = '#' | '@';
export type ReferencePart = Extract<MessagePart, { type: 'reference' }>;

/** A mention being typed: its trigger, the text after it, and where it starts (the trigger) and ends (the caret). */
export interface MentionQuery {
  trigger: MentionTrigger;
  query: string;
  start: number;
  end: number;
}

/** What the typeahead can offer: an issue or a member, with the text it inserts. */
export interface MentionItem {
  kind: 'issue' | 'member';
  /** An issue's number, a member's user id. */
  id: string;
  /** What is inserted and stands for it in the message ("#12", "@Maya Member"). */
  label: string;
  /** What the list shows. */
  title: string;
  detail?: string;
}

const MAX_QUERY = 40;

/**
 * The mention the caret is in: a `#` or `@` at the start of the text or after a space or an opening
 * bracket, followed by up to 40 characters without a space or another trigger (a number, words of a
 * title, a member's first name or email). Null when the caret is not in one.
 */
export function mentionAt(text: string, caret: number): MentionQuery | null {
  const before = text.slice(0, caret);
  const at = Math.max(before.lastIndexOf('#'), before.lastIndexOf('@'));
  if (at < 0 || caret - at - 1 > MAX_QUERY) return null;
  const prev = at === 0 ? '' : before[at - 1]!;
  if (prev !== '' && !/[\s([{"']/.test(prev)) return null;
  const trigger = before[at] as MentionTrigger;
  const query = before.slice(at + 1);
  if (/[\s#@]/.test(query)) return null;
  return { trigger, query, start: at, end: caret };
}

/** The text with the mention replaced by the picked item's label and a space, and where the caret goes. */
export function insertMention(text: string, mention: MentionQuery, item: MentionItem): { text: string; caret: number } {
  const after = text.slice(mention.end);
  const glue = after.startsWith(' ') ? '' : ' ';
  const next = `${text.slice(0, mention.start)}${item.label}${glue}${after}`;
  return { text: next, caret: mention.start + item.label.length + 1 };
}

export type TypeaheadAction =
  | { kind: 'move'; active: number }
  | { kind: 'pick'; index: number }
  | { kind: 'close' }
  | { kind: 'none' };

/**
 * What a key does while the list is open with `count` options and option `active` highlighted (-1:
 * none). `none`: the key is the text field's (typing, Enter with nothing to pick sends the message).
 */
export function typeaheadKey(
  key: string,
  active: number,
  count: number,
  modifiers: { shift?: boolean } = {},
): TypeaheadAction {
  switch (key) {
    case 'ArrowDown':
      return count ? { kind: 'move', active: active < 0 || active >= count - 1 ? 0 : active + 1 } : { kind: 'none' };
    case 'ArrowUp':
      return count ? { kind: 'move', active: active <= 0 ? count - 1 : active - 1 } : { kind: 'none' };
    case 'Home':
      return count ? { kind: 'move', active: 0 } : { kind: 'none' };
    case 'End':
      return count ? { kind: 'move', active: count - 1 } : { kind: 'none' };
    case 'Enter':
    case 'Tab':
      if (modifiers.shift || !count) return { kind: 'none' };
      return { kind: 'pick', index: active < 0 ? 0 : Math.min(active, count - 1) };
    case 'Escape':
      return { kind: 'close' };
    default:
      return { kind: 'none' };
  }
}

/** Whether `label` stands in `text` as a whole token (not the start of a longer number or word). */
function names(text: string, label: string): boolean {
  let from = 0;
  for (;;) {
    const i = text.indexOf(label, from);
    if (i < 0) return false;
    const prev = i === 0 ? '' : text[i - 1]!;
    const next = text[i + label.length] ?? '';
    if (!/[\w#@]/.test(prev) && !/\w/.test(next)) return true;
    from = i + 1;
  }
}

/** The picked items the message still names (each once), as the parts that carry their ids. */
export function referencePartsFor(text: string, picked: Iterable<ReferencePart>, max: number): ReferencePart[] {
  const out: ReferencePart[] = [];
  const seen = new Set<string>();
  for (const p of picked) {
    const key = `${p.kind}:${p.id}`;
    if (seen.has(key) || !names(text, p.label)) continue;
    seen.add(key);
    out.push(p);
    if (out.length === max) break;
  }
  return out;
}
