'use client';
/**
 * The composer's `#` (issues) and `@` (members) typeahead. Typing `#` or `@` opens a list of the
 * project's issues or members from the product's own search (`useMentionSource`); ArrowDown/ArrowUp
 * (Home/End) move through it, Enter or Tab picks, Escape closes, and the mouse works too. A picked
 * item is written into the message ("#12", "@Maya Member") and remembered by the store, which sends
 * it with the message as a `reference` part (its id) while the text still names it.
 *
 * The field stays a textarea (a multi-line message): HTML does not allow a textarea to take the
 * combobox role, so it keeps its textbox role with `aria-autocomplete="list"`, `aria-controls` and
 * `aria-activedescendant` (the option being chosen); a polite status says when the list opens and
 * how many it offers.
 */
import { type KeyboardEvent, type ReactNode, type RefObject, useEffect, useId, useRef, useState } from 'react';
import { useMentionSource } from '../agent-api';
import { useAgentActions, usePanelUi } from '../panel-context';
import { insertMention, type MentionItem, type MentionQuery, mentionAt, typeaheadKey } from './mention-logic';

/** How long typing pauses before the search runs (ms). */
const SEARCH_DELAY_MS = 120;

type Status = 'loading' | 'ready' | 'error';

interface Typeahead {
  /** Attributes of the message field. */
  fieldProps: {
    'aria-autocomplete': 'list';
    'aria-controls'?: string;
    'aria-activedescendant'?: string;
  };
  /** The field's text or caret changed. */
  onInput: (field: HTMLTextAreaElement) => void;
  /** A key in the field: true when the typeahead used it (the composer then does nothing more). */
  onKeyDown: (e: KeyboardEvent<HTMLTextAreaElement>) => boolean;
  /** The list, placed above the field. */
  popup: ReactNode;
}

const sameMention = (a: MentionQuery | null, b: MentionQuery | null) =>
  a?.trigger === b?.trigger && a?.query === b?.query && a?.start === b?.start;

export function useMentionTypeahead(inputRef: RefObject<HTMLTextAreaElement | null>): Typeahead {
  const { projectId } = usePanelUi();
  const actions = useAgentActions();
  const source = useMentionSource(projectId);
  const id = useId();
  const listId = `${id}-mentions`;
  const [mention, setMention] = useState<MentionQuery | null>(null);
  const [items, setItems] = useState<MentionItem[]>([]);
  const [active, setActive] = useState(-1);
  const [status, setStatus] = useState<Status>('loading');
  // A mention closed with Escape (or picked) stays closed until the user types another one.
  const dismissed = useRef<number | null>(null);

  const trigger = mention?.trigger;
  const query = mention?.query;
  useEffect(() => {
    if (!trigger || query === undefined) return;
    const controller = new AbortController();
    setStatus('loading');
    const timer = window.setTimeout(() => {
      (trigger === '#' ? source.issues : source.members)(query, controller.signal).then(
        (found) => {
          if (controller.signal.aborted) return;
          setItems(found);
          setActive(found.length ? 0 : -1);
          setStatus('ready');
        },
        () => {
          if (controller.signal.aborted) return;
          setItems([]);
          setActive(-1);
          setStatus('error');
        },
      );
    }, SEARCH_DELAY_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [trigger, query, source]);

  const close = () => {
    if (mention) dismissed.current = mention.start;
    setMention(null);
    setItems([]);
    setActive(-1);
  };

  const onInput = (field: HTMLTextAreaElement) => {
    const next = field.selectionStart === field.selectionEnd ? mentionAt(field.value, field.selectionStart) : null;
    if (next && dismissed.current === next.start) return;
    dismissed.current = null;
    if (!sameMention(next, mention)) setMention(next);
  };

  const pick = (index: number) => {
    const item = items[index];
    const field = inputRef.current;
    if (!item || !mention || !field) return;
    const { text, caret } = insertMention(field.value, mention, item);
    actions.addReference({ type: 'reference', kind: item.kind, id: item.id, label: item.label });
    actions.setDraft(text);
    close();
    // The caret after the inserted mention, once the field shows it; not when the user typed on
    // meanwhile (a busy page's next frame can come after a keystroke: the caret is theirs then).
    window.requestAnimationFrame(() => {
      if (field.value !== text) return;
      field.focus();
      field.setSelectionRange(caret, caret);
    });
  };

  const open = mention !== null;
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open || e.nativeEvent.isComposing) return false;
    const action = typeaheadKey(e.key, active, status === 'ready' ? items.length : 0, { shift: e.shiftKey });
    if (action.kind === 'none') return false;
    e.preventDefault();
    if (action.kind === 'move') setActive(action.active);
    else if (action.kind === 'pick') pick(action.index);
    else close();
    return true;
  };

  const what = mention?.trigger === '#' ? 'issues' : 'members';
  const note =
    status === 'loading'
      ? `Searching ${what}…`
      : status === 'error'
        ? `Could not load ${what}.`
        : items.length === 0
          ? `No ${what} match.`
          : null;
  const popup = open ? (
    <div
      data-testid="assistant-mentions"
      data-trigger={mention.trigger}
      className="absolute bottom-full left-0 right-0 z-10 mb-1 max-h-60 overflow-y-auto rounded-md border border-slate-300 bg-white text-sm shadow-lg dark:border-slate-600 dark:bg-slate-900"
    >
      {note ? <p className="px-2 py-1.5 text-xs text-slate-700 dark:text-slate-300">{note}</p> : null}
      <div id={listId} role="listbox" aria-label={mention.trigger === '#' ? 'Issues' : 'Members'}>
        {status === 'ready'
          ? items.map((item, i) => (
              // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard stays in the message field, which picks with Enter or Tab (aria-activedescendant names the option)
              <div
                key={`${item.kind}:${item.id}`}
                id={`${listId}-${i}`}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                data-testid="assistant-mention-option"
                data-id={item.id}
                // Keeps the focus in the field: the click picks without blurring it.
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => pick(i)}
                className={`flex cursor-pointer items-baseline gap-2 px-2 py-1 ${
                  i === active ? 'bg-blue-100 dark:bg-blue-900' : 'hover:bg-slate-100 dark:hover:bg-slate-800'
                }`}
              >
                {item.kind === 'issue' ? <span className="shrink-0 font-medium tabular-nums">{item.label}</span> : null}
                <span className="min-w-0 flex-1 truncate">{item.title}</span>
                {item.detail ? (
                  <span className="shrink-0 text-xs text-slate-700 dark:text-slate-300">{item.detail}</span>
                ) : null}
              </div>
            ))
          : null}
      </div>
    </div>
  ) : null;
  const announcement = !open
    ? ''
    : status === 'ready' && items.length
      ? `${items.length} ${what}: up and down arrows to choose, Enter to insert, Escape to close.`
      : (note ?? '');

  return {
    fieldProps: {
      'aria-autocomplete': 'list',
      ...(open ? { 'aria-controls': listId } : {}),
      ...(open && status === 'ready' && active >= 0 ? { 'aria-activedescendant': `${listId}-${active}` } : {}),
    },
    onInput,
    onKeyDown,
    popup: (
      <>
        {popup}
        <p className="sr-only" aria-live="polite" data-testid="assistant-mentions-status">
          {announcement}
        </p>
      </>
    ),
  };
}
