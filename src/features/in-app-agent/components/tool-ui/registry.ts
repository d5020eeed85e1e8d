/**
 * Tool results as product UI: a renderer per declared result kind (`tool-declarations.ts`,
 * `render`), looked up by tool name. A tool without a renderer shows its result in the generic
 * tool card; the raw result stays available behind its disclosure either way. Renderers are
 * prop-driven components, so the panel, another tab and the read-only review show the same.
 */
import { declarationOf } from '../../tool-declarations';
import { PRODUCT_RENDERERS } from './renderers';
import type { ToolRenderers, ToolResultRenderer } from './types';

export type { ToolRenderers, ToolResultProps, ToolResultRenderer } from './types';

/** The renderer of `toolName`'s results, or null: the generic card shows them. */
export function resultRendererFor(
  toolName: string,
  renderers: ToolRenderers = PRODUCT_RENDERERS,
): ToolResultRenderer | null {
  const kind = declarationOf(toolName)?.render;
  return (kind && renderers[kind]) || null;
}
