/** The props every tool result renderer takes, and the table of renderers by result kind. */
import type { ComponentType } from 'react';
import type { ViewToolCall } from '../../schema';
import type { ResultRender } from '../../tool-declarations';

export interface ToolResultProps {
  /** The call (name, arguments as streamed, status). */
  call: ViewToolCall;
  /** Its result, parsed from JSON (the text itself when it is not JSON). */
  result: unknown;
}

export type ToolResultRenderer = ComponentType<ToolResultProps>;

/** The renderers, by result kind. */
export type ToolRenderers = Partial<Record<ResultRender, ToolResultRenderer>>;
