/**
 * Tool results as product UI: a renderer per declared result kind (`tool-declarations.ts`,
 * `render`), looked up by tool name. A tool without a renderer shows its result in the generic
 * tool card; the raw result stays available behind its disclosure either way. Renderers are
 * prop-driven components, so the panel, another tab and the read-only review show the same.
 */
import type { ComponentType } from 'react';
import type { ViewToolCall } from '../../schema';
import { declarationOf, type ResultRender } from '../../tool-declarations';

export interface ToolResultProps {
  /** The call (name, arguments as streamed, status). */
  call: ViewToolCall;
  /** Its result, parsed from JSON (the text itself when it is not JSON). */
  result: unknown;
}

export type ToolResultRenderer = ComponentType<ToolResultProps>;

/** The renderers, by result kind. */
export type ToolRenderers = Partial<Record<ResultRender, ToolResultRenderer>>;

const RENDERERS: ToolRenderers = {};

/** The renderer of `toolName`'s results, or null: the generic card shows them. */
export function resultRendererFor(toolName: string, renderers: ToolRenderers = RENDERERS): ToolResultRenderer | null {
  const kind = declarationOf(toolName)?.render;
  return (kind && renderers[kind]) || null;
}
