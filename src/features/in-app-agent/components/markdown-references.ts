/**
 * The remark step that turns an answer's checked issue references ("#12", "issue 12") into links
 * to the issue: only numbers the server checked (`CUSTOM_EVENTS.references`), never inside code,
 * links or raw HTML. Every other reference stays the text it was. Pure.
 */
import { referencesIn } from '../issue-references';

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
  data?: { hProperties?: Record<string, string> };
}

/** Nodes whose text is not prose: references inside them stay as written. */
const SKIP = new Set(['link', 'linkReference', 'inlineCode', 'code', 'definition', 'html', 'image', 'imageReference']);

/** A text node split around the checked references it holds (the node itself when it holds none). */
function splitText(node: MdNode, checked: ReadonlySet<number>, href: (n: number) => string): MdNode[] {
  const text = node.value ?? '';
  const out: MdNode[] = [];
  let at = 0;
  for (const ref of referencesIn(text)) {
    if (!checked.has(ref.number)) continue;
    if (ref.index > at) out.push({ type: 'text', value: text.slice(at, ref.index) });
    out.push({
      type: 'link',
      url: href(ref.number),
      children: [{ type: 'text', value: ref.text }],
      data: { hProperties: { dataIssueRef: String(ref.number) } },
    });
    at = ref.index + ref.text.length;
  }
  if (!out.length) return [node];
  if (at < text.length) out.push({ type: 'text', value: text.slice(at) });
  return out;
}

function visit(node: MdNode, checked: ReadonlySet<number>, href: (n: number) => string): void {
  if (!node.children || SKIP.has(node.type)) return;
  node.children = node.children.flatMap((child) => {
    if (child.type === 'text') return splitText(child, checked, href);
    visit(child, checked, href);
    return [child];
  });
}

/** The remark plugin for one answer: its checked issue numbers and how an issue's page is addressed. */
export function remarkIssueReferences(checked: ReadonlySet<number>, href: (n: number) => string) {
  return () => (tree: unknown) => {
    if (checked.size) visit(tree as MdNode, checked, href);
  };
}
