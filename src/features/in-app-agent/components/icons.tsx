/** Small inline icons (no icon font or emoji font needed). Always decorative: pair with text. */

const INLINE = 'inline-block shrink-0 align-[-0.125em]';

/**
 * A 24×24 stroked icon drawing the path `d`, inside a centred circle when `ring` is set; `className`
 * replaces the inline placement (the spinner adds its turning).
 */
function Svg({ d, ring = false, className = INLINE }: { d: string; ring?: boolean; className?: string }) {
  return (
    <svg
      viewBox="0 0 24 24"
      width="1em"
      height="1em"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      className={className}
    >
      {ring ? <circle cx="12" cy="12" r="9" /> : null}
      <path d={d} />
    </svg>
  );
}

export const ThumbUpIcon = () => (
  <Svg d="M7 10v11H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1h3zM7 10l4-8a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.4 8a2 2 0 0 1-2 1.7H7" />
);
export const ThumbDownIcon = () => (
  <Svg d="M17 14V3h3a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1h-3zM17 14l-4 8a3 3 0 0 1-3-3v-4H4.5a2 2 0 0 1-2-2.3l1.4-8A2 2 0 0 1 5.9 3H17" />
);
export const ToolIcon = () => (
  <Svg d="M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 0 0 5.4-5.4l-2.5 2.5-2.4-.6-.6-2.4 2.5-2.5z" />
);
export const ShieldIcon = () => <Svg d="M12 3l8 3v6c0 4.5-3.4 8.3-8 9-4.6-.7-8-4.5-8-9V6l8-3z" />;
export const InfoIcon = () => <Svg ring d="M12 11v5M12 8h.01" />;
export const ClockIcon = () => <Svg ring d="M12 7v5l3 2" />;
export const TrashIcon = () => <Svg d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3" />;
export const HourglassIcon = () => (
  <Svg d="M6 3h12M6 21h12M7 3c0 5 10 5 10 9s-10 4-10 9M17 3c0 5-10 5-10 9s10 4 10 9" />
);
export const SpinnerIcon = () => (
  <Svg d="M12 3a9 9 0 1 0 9 9" className={`${INLINE} animate-spin motion-reduce:animate-none`} />
);
export const PaperclipIcon = () => (
  <Svg d="M21 11.5l-8.5 8.5a5.5 5.5 0 0 1-7.8-7.8l9-9a3.7 3.7 0 0 1 5.2 5.2l-9 9a1.8 1.8 0 0 1-2.6-2.6l8.3-8.3" />
);
export const FileIcon = () => <Svg d="M14 3H6v18h12V7l-4-4zM14 3v4h4" />;
export const WarningIcon = () => <Svg d="M12 3l10 18H2L12 3zM12 10v5M12 18h.01" />;
