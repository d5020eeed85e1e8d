'use client';
/**
 * Markdown written by the model, rendered safely: no raw HTML (react-markdown shows it as text; no
 * rehype-raw), links only for http(s)/mailto/relative URLs (anything else is inert text), external
 * links open in a new tab without opener or referrer, and images are never fetched automatically
 * (an image URL can carry data out of the page) — they become links the user may choose to open.
 *
 * Product references in an answer (given `references`, what the server checked for the message):
 * "#12" and "issue 12" become links to the issue only when the issue was checked, and a link the
 * model wrote to an issue page stays a link only when it points to a checked issue of this project;
 * anything else stays plain text.
 *
 * The text is rendered block by block (`markdown-blocks.ts`): each top-level block is its own
 * memoized render, so while an answer streams only its last, growing block is parsed again; the
 * output is the whole text's render, element for element.
 */
import Link from 'next/link';
import { Fragment, memo, useMemo, useState, type ReactNode } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { issueOfHref } from '../issue-references';
import type { IssueReference } from '../schema';
import { markdownBlocks } from './markdown-blocks';
import { remarkIssueReferences } from './markdown-references';
import { classifyHref, safeUrlTransform } from './safe-url';
import { humanize } from './tool-ui/results';
import { type ProductLinks, useProductLinks } from './tool-ui/product-links';

interface HastLike {
  type: string;
  value?: string;
  children?: HastLike[];
}

function hastText(node: HastLike | undefined): string {
  if (!node) return '';
  if (node.type === 'text') return node.value ?? '';
  return (node.children ?? []).map(hastText).join('');
}

function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      data-testid="code-copy"
      className="absolute right-1.5 top-1.5 rounded border border-slate-300 bg-white/90 px-1.5 py-0.5 text-xs text-slate-700 hover:bg-slate-100 dark:border-slate-600 dark:bg-slate-800/90 dark:text-slate-200 dark:hover:bg-slate-700"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState('copied');
        } catch {
          setState('failed');
        }
        window.setTimeout(() => setState('idle'), 1500);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
      <span className="sr-only"> code</span>
    </button>
  );
}

const components: Components = {
  a({ href, children }) {
    const safe = classifyHref(href);
    if (!safe) return <span data-inert-link="true">{children}</span>;
    if (safe.kind === 'internal') {
      return (
        <Link href={safe.href} className="text-blue-700 underline dark:text-blue-300">
          {children}
        </Link>
      );
    }
    return (
      <a
        href={safe.href}
        className="text-blue-700 underline dark:text-blue-300"
        {...(safe.kind === 'external' ? { target: '_blank', rel: 'noopener noreferrer' } : {})}
      >
        {children}
        {safe.kind === 'external' ? <span className="sr-only"> (opens in a new tab)</span> : null}
      </a>
    );
  },
  img({ src, alt }) {
    const safe = typeof src === 'string' ? classifyHref(src) : null;
    const label = alt ? `Image: ${alt}` : 'Image';
    if (!safe || safe.kind === 'mailto') return <span className="italic">[{label}]</span>;
    return (
      <a
        href={safe.href}
        target="_blank"
        rel="noopener noreferrer"
        className="italic text-blue-700 underline dark:text-blue-300"
      >
        [{label}]
      </a>
    );
  },
  pre({ node, children }) {
    const text = hastText(node as HastLike | undefined).replace(/\n$/, '');
    return (
      <div className="group relative my-2">
        <pre className="overflow-x-auto rounded-md bg-slate-100 p-3 pr-16 text-[0.8rem] leading-relaxed dark:bg-slate-900">
          {children}
        </pre>
        <CopyButton text={text} />
      </div>
    );
  },
  code({ className, children }) {
    return <code className={['font-mono', className].filter(Boolean).join(' ')}>{children}</code>;
  },
  table({ children }) {
    return (
      <div className="relative my-2 overflow-x-auto">
        <table className="min-w-full border-collapse text-sm">{children}</table>
      </div>
    );
  },
  th({ children }) {
    return <th className="border border-slate-300 px-2 py-1 text-left dark:border-slate-700">{children}</th>;
  },
  td({ children }) {
    return <td className="border border-slate-300 px-2 py-1 dark:border-slate-700">{children}</td>;
  },
};

const remarkPlugins = [remarkGfm];

/** A checked issue reference: a link to the issue, named with its title and status for everyone. */
function IssueChip({ issue, href, children }: { issue: IssueReference; href: string; children: ReactNode }) {
  return (
    <Link
      href={href}
      data-testid="issue-chip"
      data-issue-number={issue.number}
      title={`#${issue.number} ${issue.title} (${humanize(issue.status)})`}
      className="rounded bg-blue-50 px-1 font-medium text-blue-800 no-underline hover:underline dark:bg-blue-950 dark:text-blue-200"
    >
      {children}
      <span className="sr-only">
        {' '}
        (issue: {issue.title}, {humanize(issue.status)})
      </span>
    </Link>
  );
}

/** The components of an answer whose references were checked: chips, and issue links only when checked. */
function checkedComponents(byNumber: ReadonlyMap<number, IssueReference>, links: ProductLinks): Components {
  const plainA = components.a as (props: { href?: string; children?: ReactNode }) => ReactNode;
  return {
    ...components,
    a({ node, href, children }) {
      const ref = (node?.properties as { dataIssueRef?: unknown } | undefined)?.dataIssueRef;
      const chip = ref !== undefined ? byNumber.get(Number(ref)) : undefined;
      if (chip)
        return (
          <IssueChip issue={chip} href={links.issue(chip.number)}>
            {children}
          </IssueChip>
        );
      const target = typeof href === 'string' ? issueOfHref(href, links.projectId, links.origins) : null;
      if (target === 'foreign' || (target && !byNumber.has(target.number))) {
        return <span data-unchecked-link="true">{children}</span>;
      }
      if (target)
        return (
          <IssueChip issue={byNumber.get(target.number)!} href={links.issue(target.number)}>
            {children}
          </IssueChip>
        );
      return plainA({ href, children });
    },
  };
}

function MarkdownImpl({
  text,
  references,
}: {
  text: string;
  /** The issues the server checked for this answer: references become links only for these. */
  references?: readonly IssueReference[];
}): ReactNode {
  const links = useProductLinks();
  const checked = useMemo(() => {
    if (!references || !links) return null;
    const byNumber = new Map(references.map((r) => [r.number, r]));
    return {
      plugins: [remarkGfm, remarkIssueReferences(new Set(byNumber.keys()), links.issue)],
      components: checkedComponents(byNumber, links),
    };
  }, [references, links]);
  return (
    <div className="assistant-markdown space-y-2 break-words text-sm leading-relaxed [&_blockquote]:border-l-4 [&_blockquote]:border-slate-300 [&_blockquote]:pl-3 [&_h1]:text-base [&_h1]:font-semibold [&_h2]:text-base [&_h2]:font-semibold [&_h3]:font-semibold [&_li]:ml-5 [&_ol]:list-decimal [&_ul]:list-disc [&_:not(pre)>code]:rounded [&_:not(pre)>code]:bg-slate-100 [&_:not(pre)>code]:px-1 dark:[&_:not(pre)>code]:bg-slate-800">
      <MarkdownBlocks
        text={text}
        plugins={checked?.plugins ?? remarkPlugins}
        components={checked?.components ?? components}
      />
    </div>
  );
}

type Plugins = NonNullable<Options['remarkPlugins']>;

/**
 * One top-level block (`markdown-blocks.ts`), rendered again only when its source or the answer's
 * references change: while an answer streams, only its last block is parsed on each frame.
 */
const MarkdownBlock = memo(function MarkdownBlock({
  source,
  plugins,
  components: blockComponents,
}: {
  source: string;
  plugins: Plugins;
  components: Components;
}) {
  return (
    <ReactMarkdown remarkPlugins={plugins} components={blockComponents} urlTransform={safeUrlTransform}>
      {source}
    </ReactMarkdown>
  );
});

/** The blocks in order, a line break between two (as the whole text's render puts between its top-level elements). */
function MarkdownBlocks({
  text,
  plugins,
  components: blockComponents,
}: {
  text: string;
  plugins: Plugins;
  components: Components;
}) {
  const blocks = markdownBlocks(text);
  return blocks.map((source, i) => (
    // Blocks only grow at the end of an answer: the index names the same block from frame to frame.
    // biome-ignore lint/suspicious/noArrayIndexKey: see above
    <Fragment key={i}>
      {i > 0 ? '\n' : null}
      <MarkdownBlock source={source} plugins={plugins} components={blockComponents} />
    </Fragment>
  ));
}

export const Markdown = memo(MarkdownImpl);
