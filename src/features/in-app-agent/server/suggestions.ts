/**
 * Follow-up suggestions, from the same model call as the answer (no second call): the system prompt
 * asks the model to end an answer with a fenced block of up to three short requests the user might
 * send next; `SuggestionsFilter` takes that block out of the streamed text (holding back only a line
 * that could be its opening fence) and reads the suggestions from it when the message ends. The
 * normalizer (agent.ts) sends them as `CUSTOM_EVENTS.suggestions` after the message.
 */
import { LIMITS } from '../constants';

/** The fence's info string. */
const INFO = 'suggestions';

/** What the system prompt tells the model. */
export const SUGGESTIONS_INSTRUCTION =
  `When a follow-up is likely useful, end your answer with up to ${LIMITS.maxSuggestions} short requests the user might send you next, ` +
  `written as the user would (e.g. "Summarize issue #3"), one per line in a fenced block whose info string is \`${INFO}\`. ` +
  'The block is shown as buttons, not as text; leave it out when nothing obvious follows.';

/** An opening fence line (after a line break): up to three spaces, three or more backticks or tildes, the info string. */
const OPENING = /\n[ \t]{0,3}(`{3,}|~{3,})[ \t]*suggestions[ \t]*\r?\n/i;
/** The opening fence when the text ends right after it (a block with nothing in it). */
const OPENING_AT_END = /(?:^|\n)[ \t]{0,3}(`{3,}|~{3,})[ \t]*suggestions[ \t]*$/i;

/** Whether `line` (the text after the last line break) may still become an opening fence. */
function mayOpen(line: string): boolean {
  const t = line.replace(/^[ \t]{0,3}/, '');
  if (t === '') return line.length > 0;
  const m = /^(`+|~+)([ \t]*)(.*)$/.exec(t);
  if (!m) return false;
  if (m[3] === '') return true;
  if (m[1]!.length < 3) return false;
  const rest = m[3]!.toLowerCase().replace(/[ \t\r]+$/, '');
  return INFO.startsWith(rest) || rest === INFO;
}

/** The suggestions of a block's lines: list markers and quotes taken off, empty and long ones left out, each once. */
function parseSuggestions(block: string): string[] {
  const out: string[] = [];
  for (const raw of block.split('\n')) {
    if (/^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$/.test(raw)) break; // the closing fence
    const line = raw
      .trim()
      .replace(/^(?:[-*+•]|\d{1,2}[.)])\s+/, '')
      .replace(/^["“'](.*)["”']$/, '$1')
      .trim();
    if (!line || line.length > LIMITS.maxSuggestionChars || out.includes(line)) continue;
    out.push(line);
    if (out.length === LIMITS.maxSuggestions) break;
  }
  return out;
}

/** One streamed assistant message: its visible text out, its suggestions block kept back. */
export class SuggestionsFilter {
  /** Text held back: the last line, while it may still become the opening fence. */
  private held = '';
  /** The block's text, once its opening fence was seen. */
  private block: string | null = null;
  /** Whether what was shown so far ends a line (or nothing was): held text always starts a line. */
  private atLineStart = true;

  /** A delta of the message's text; returns the part to show now (often all of it). */
  push(delta: string): string {
    if (this.block !== null) {
      this.block += delta;
      return '';
    }
    const text = this.held + delta;
    // A line break in front when `text` starts a line, so one pattern finds a fence anywhere.
    const lead = this.held || this.atLineStart ? '\n' : '';
    this.held = '';
    const open = OPENING.exec(lead + text);
    if (open) {
      this.block = text.slice(open.index + open[0].length - lead.length);
      return this.shown(text.slice(0, Math.max(0, open.index + 1 - lead.length)));
    }
    const lastBreak = (lead + text).lastIndexOf('\n');
    const lineStart = lastBreak + 1 - lead.length;
    if (lastBreak >= 0 && mayOpen(text.slice(lineStart))) {
      this.held = text.slice(lineStart);
      return this.shown(text.slice(0, lineStart));
    }
    return this.shown(text);
  }

  private shown(text: string): string {
    if (text) this.atLineStart = text.endsWith('\n');
    return text;
  }

  /** The message ended: the rest of its visible text, and its suggestions. */
  end(): { text: string; suggestions: string[] } {
    if (this.block === null) {
      const held = this.held;
      this.held = '';
      return { text: OPENING_AT_END.test(held) ? '' : held, suggestions: [] };
    }
    const block = this.block;
    this.block = null;
    const close = /(?:^|\n)[ \t]{0,3}(?:`{3,}|~{3,})[ \t]*(?:\n|$)/.exec(block);
    const after = close ? block.slice(close.index + close[0].length) : '';
    return { text: after.trim() ? `\n\n${after.trim()}` : '', suggestions: parseSuggestions(block) };
  }
}
