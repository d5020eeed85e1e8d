// The composer's # and @ typeahead without a browser: where a mention is typed, what each key does
// in the open list, how a pick goes into the text, and which picks a message sends as references.
import { describe, expect, it } from 'vitest';
import {
  insertMention,
  mentionAt,
  referencePartsFor,
  typeaheadKey,
  type ReferencePart,
} from '@/features/in-app-agent/components/composer/mention-logic';

describe('mentionAt', () => {
  it('finds a # or @ being typed at the caret, at a word start', () => {
    expect(mentionAt('look at #12', 11)).toEqual({ trigger: '#', query: '12', start: 8, end: 11 });
    expect(mentionAt('@ma', 3)).toEqual({ trigger: '@', query: 'ma', start: 0, end: 3 });
    expect(mentionAt('(#', 2)).toEqual({ trigger: '#', query: '', start: 1, end: 2 });
  });

  it('ignores triggers inside words, finished mentions and a caret elsewhere', () => {
    expect(mentionAt('mail me@example.com', 19)).toBeNull();
    expect(mentionAt('C#12', 4)).toBeNull();
    expect(mentionAt('#12 done', 8)).toBeNull();
    expect(mentionAt('#12 done', 3)).toEqual({ trigger: '#', query: '12', start: 0, end: 3 });
    expect(mentionAt(`#${'x'.repeat(41)}`, 42)).toBeNull();
  });
});

describe('typeaheadKey', () => {
  it('moves with the arrows (wrapping), Home and End', () => {
    expect(typeaheadKey('ArrowDown', 0, 3)).toEqual({ kind: 'move', active: 1 });
    expect(typeaheadKey('ArrowDown', 2, 3)).toEqual({ kind: 'move', active: 0 });
    expect(typeaheadKey('ArrowUp', 0, 3)).toEqual({ kind: 'move', active: 2 });
    expect(typeaheadKey('Home', 2, 3)).toEqual({ kind: 'move', active: 0 });
    expect(typeaheadKey('End', 0, 3)).toEqual({ kind: 'move', active: 2 });
  });

  it('picks with Enter or Tab, closes with Escape, and leaves other keys to the field', () => {
    expect(typeaheadKey('Enter', 1, 3)).toEqual({ kind: 'pick', index: 1 });
    expect(typeaheadKey('Tab', -1, 3)).toEqual({ kind: 'pick', index: 0 });
    expect(typeaheadKey('Escape', 1, 3)).toEqual({ kind: 'close' });
    expect(typeaheadKey('a', 1, 3)).toEqual({ kind: 'none' });
    // Nothing to pick: Enter sends the message, Tab moves on, Shift+Enter is a new line.
    expect(typeaheadKey('Enter', -1, 0)).toEqual({ kind: 'none' });
    expect(typeaheadKey('Enter', 0, 3, { shift: true })).toEqual({ kind: 'none' });
    expect(typeaheadKey('ArrowDown', -1, 0)).toEqual({ kind: 'none' });
  });
});

describe('insertMention and referencePartsFor', () => {
  const issue = { kind: 'issue' as const, id: '12', label: '#12', title: 'Login' };
  it('replaces the typed mention with the label and a space, the caret after it', () => {
    const m = mentionAt('see #1 now', 6)!;
    expect(insertMention('see #1 now', m, issue)).toEqual({ text: 'see #12 now', caret: 8 });
    const end = mentionAt('see #lo', 7)!;
    expect(insertMention('see #lo', end, issue)).toEqual({ text: 'see #12 ', caret: 8 });
  });

  it('sends the picks the text still names, each once, as whole tokens', () => {
    const picked: ReferencePart[] = [
      { type: 'reference', kind: 'issue', id: '12', label: '#12' },
      { type: 'reference', kind: 'issue', id: '1', label: '#1' },
      { type: 'reference', kind: 'member', id: 'u1', label: '@Maya Member' },
    ];
    expect(referencePartsFor('ask @Maya Member about #12.', picked, 20).map((p) => p.id)).toEqual(['12', 'u1']);
    // "#12" does not name #1; an edited-away pick is not sent.
    expect(referencePartsFor('only #12', picked, 20).map((p) => p.id)).toEqual(['12']);
    expect(referencePartsFor('#12 #1', picked, 1).map((p) => p.id)).toEqual(['12']);
  });
});
