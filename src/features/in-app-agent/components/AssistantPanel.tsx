'use client';
/**
 * The assistant side panel: docked right and resizable on desktop, full screen on small screens.
 * This file is the frame (placement, size, keyboard, the live region, which view shows); its parts
 * are the header (panel/PanelHeader.tsx), the conversation (panel/MessageList.tsx) or the history
 * (panel/PanelHistory.tsx), and the composer (composer/Composer.tsx). Each part reads the store
 * through selectors (panel-context.tsx), so a streamed frame renders only what it changed.
 */
import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type KeyboardEvent as ReactKeyboardEvent,
  type RefObject,
} from 'react';
import type { Announcement } from './agent-store';
import { Composer } from './composer/Composer';
import { isTextField } from './InAppAgentProvider';
import { ModelNotice } from './ModelNotice';
import { ConversationAllowances } from './panel/ConversationAllowances';
import { MessageList, useFollowLatest } from './panel/MessageList';
import { PanelHeader } from './panel/PanelHeader';
import { HistoryUndo, PanelHistory } from './panel/PanelHistory';
import { useAgentActions, useAgentSelector, usePanelUi } from './panel-context';
import { PANEL_WIDTH } from './storage';

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';

function useDesktop(): boolean {
  const [desktop, setDesktop] = useState(false);
  useEffect(() => {
    const mq = window.matchMedia('(min-width: 768px)');
    const on = () => setDesktop(mq.matches);
    on();
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return desktop;
}

/** Keeps the fixed panel aligned with its in-flow placeholder (below the header, sticky on scroll). */
function useDockTop(anchor: RefObject<HTMLElement | null>, active: boolean): number {
  const [top, setTop] = useState(0);
  useEffect(() => {
    if (!active) return;
    let frame: number | null = null;
    const measure = () => {
      frame = null;
      const el = anchor.current;
      if (!el) return;
      setTop(Math.max(0, Math.round(el.getBoundingClientRect().top)));
    };
    const schedule = () => {
      if (frame === null) frame = window.requestAnimationFrame(measure);
    };
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    const ro = new ResizeObserver(schedule);
    if (anchor.current?.parentElement) ro.observe(anchor.current.parentElement);
    return () => {
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
      ro.disconnect();
      if (frame !== null) window.cancelAnimationFrame(frame);
    };
  }, [anchor, active]);
  return top;
}

/** A text field the user has typed into: Escape there leaves the field instead of closing the panel. */
function fieldWithContent(el: EventTarget | null): HTMLElement | null {
  if (!(el instanceof Element) || !isTextField(el)) return null;
  const text = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? el.value : (el.textContent ?? '');
  return text.trim() ? el : null;
}

/** Polite live region: each new entry (answer, approval request, failure) is read once. */
function Announcer({ items }: { items: Announcement[] }) {
  return (
    <div
      aria-live="polite"
      aria-atomic="false"
      aria-relevant="additions"
      className="sr-only"
      data-testid="assistant-announcer"
    >
      {items.map((a) => (
        <p key={a.id} data-testid="assistant-announcement">
          {a.text}
        </p>
      ))}
    </div>
  );
}

function ResizeHandle({ width, setWidth }: { width: number; setWidth: (w: number) => void }) {
  const drag = useRef<{ x: number; w: number } | null>(null);
  return (
    <div
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the assistant panel"
      aria-valuenow={width}
      aria-valuemin={PANEL_WIDTH.min}
      aria-valuemax={PANEL_WIDTH.max}
      tabIndex={0}
      data-testid="assistant-resize"
      title="Drag, or use the arrow keys, to resize"
      onPointerDown={(e) => {
        e.preventDefault();
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, w: width };
      }}
      onPointerMove={(e) => {
        if (!drag.current) return;
        setWidth(drag.current.w + (drag.current.x - e.clientX));
      }}
      onPointerUp={(e) => {
        drag.current = null;
        (e.currentTarget as HTMLElement).releasePointerCapture(e.pointerId);
      }}
      onKeyDown={(e) => {
        const big = e.shiftKey ? 4 : 1;
        if (e.key === 'ArrowLeft') setWidth(width + PANEL_WIDTH.step * big);
        else if (e.key === 'ArrowRight') setWidth(width - PANEL_WIDTH.step * big);
        else if (e.key === 'Home') setWidth(PANEL_WIDTH.min);
        else if (e.key === 'End') setWidth(PANEL_WIDTH.max);
        else return;
        e.preventDefault();
      }}
      className="absolute inset-y-0 left-0 z-10 w-1.5 -translate-x-1/2 cursor-col-resize bg-transparent hover:bg-blue-400/50 focus-visible:bg-blue-500/60"
    />
  );
}

export function AssistantPanel() {
  const { setOpen, setWidth } = useAgentActions();
  const { panelView: mode, focusRequest } = usePanelUi();
  const open = useAgentSelector((state) => state.open);
  const width = useAgentSelector((state) => state.width);
  const conversationId = useAgentSelector((state) => state.conversationId);
  const model = useAgentSelector((state) => state.model);
  const announcements = useAgentSelector((state) => state.announcements);
  const desktop = useDesktop();
  const placeholder = useRef<HTMLDivElement>(null);
  const top = useDockTop(placeholder, open && desktop);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const follow = useFollowLatest();
  const { stick } = follow;
  const onSend = useCallback(() => {
    stick.current = true;
  }, [stick]);

  // Focus the input when the user opens the panel (or starts a new conversation).
  useEffect(() => {
    if (!focusRequest) return;
    window.requestAnimationFrame(() => inputRef.current?.focus());
  }, [focusRequest]);

  if (!open) return null;

  const onKeyDown = (e: ReactKeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape' && !e.defaultPrevented && !e.nativeEvent.isComposing) {
      e.preventDefault();
      // Escape in a field with text first leaves the field (what was typed stays); a second
      // Escape, or one elsewhere in the panel, closes the panel.
      const field = fieldWithContent(e.target);
      if (field) {
        field.blur();
        panelRef.current?.focus();
        return;
      }
      setOpen(false);
      return;
    }
    // Full screen on small screens: the page behind is hidden, so Tab cycles within the panel.
    if (e.key === 'Tab' && !desktop) {
      const focusables = Array.from(e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
        (el) => !el.hasAttribute('disabled') && el.getClientRects().length > 0,
      );
      const first = focusables[0];
      const last = focusables[focusables.length - 1];
      if (!first || !last) return;
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };

  return (
    <>
      {/* In-flow placeholder: reserves the panel's width beside the page content on desktop. */}
      <div ref={placeholder} aria-hidden="true" className="hidden shrink-0 md:block" style={{ width }} />
      {/* A div, not an aside: an aside may not carry the dialog role of the small-screen layout. The
          roles keep the landmark (complementary) when docked. */}
      {/* biome-ignore-start lint/a11y/noStaticElementInteractions: the role is set below (complementary or dialog) */}
      {/* biome-ignore-start lint/a11y/useAriaPropsSupportedByRole: complementary and dialog both take aria-label; aria-modal only comes with dialog */}
      <div
        id="assistant-panel"
        ref={panelRef}
        tabIndex={-1}
        data-testid="assistant-panel"
        data-layout={desktop ? 'docked' : 'fullscreen'}
        data-conversation-id={conversationId ?? ''}
        aria-label="Assistant"
        role={desktop ? 'complementary' : 'dialog'}
        aria-modal={desktop ? undefined : true}
        onKeyDown={onKeyDown}
        style={desktop ? { width, top } : undefined}
        className="fixed inset-0 z-50 flex flex-col outline-none border-slate-200 bg-white text-slate-900 md:inset-auto md:bottom-0 md:right-0 md:z-30 md:border-l dark:border-slate-800 dark:bg-slate-950 dark:text-slate-100"
      >
        {/* biome-ignore-end lint/a11y/noStaticElementInteractions: end of the panel's opening tag */}
        {/* biome-ignore-end lint/a11y/useAriaPropsSupportedByRole: end of the panel's opening tag */}
        {desktop ? <ResizeHandle width={width} setWidth={setWidth} /> : null}
        <PanelHeader />
        <ModelNotice model={model} />
        <Announcer items={announcements} />
        {mode === 'history' ? (
          <PanelHistory />
        ) : (
          <>
            <MessageList follow={follow} inputRef={inputRef} />
            <HistoryUndo />
            <ConversationAllowances />
            <Composer inputRef={inputRef} onSend={onSend} />
          </>
        )}
      </div>
    </>
  );
}
