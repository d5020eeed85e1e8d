/**
 * Reads a `text/event-stream` body into frames: the position (`id:`) and the parsed AG-UI event
 * (`data:`), validated with the module's `AgentEventSchema`. Framework-free (no DOM, no React), so
 * the store and its unit tests share it. Frames whose data is not a known event are skipped
 * rather than fatal: a newer server may send event types this build does not know.
 */
import { AgentEventSchema, type AgentEvent } from '../schema';

export interface SseFrame {
  /** The SSE `id:` of the frame: the event's position in its run. Null when the frame has none (snapshots). */
  position: number | null;
  event: AgentEvent;
}

/** Incremental parser: feed decoded text, get the complete frames (a frame ends at a blank line). */
class SseParser {
  private buffer = '';

  push(text: string): SseFrame[] {
    this.buffer += text.replace(/\r\n?/g, '\n');
    const frames: SseFrame[] = [];
    let boundary = this.buffer.indexOf('\n\n');
    while (boundary >= 0) {
      const block = this.buffer.slice(0, boundary);
      this.buffer = this.buffer.slice(boundary + 2);
      const frame = parseBlock(block);
      if (frame) frames.push(frame);
      boundary = this.buffer.indexOf('\n\n');
    }
    return frames;
  }
}

function parseBlock(block: string): SseFrame | null {
  const dataLines: string[] = [];
  let position: number | null = null;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue; // an SSE comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') dataLines.push(value);
    else if (field === 'id' && /^\d{1,15}$/.test(value.trim())) position = Number(value.trim());
  }
  if (dataLines.length === 0) return null;
  let json: unknown;
  try {
    json = JSON.parse(dataLines.join('\n'));
  } catch {
    return null;
  }
  const parsed = AgentEventSchema.safeParse(json);
  return parsed.success ? { position, event: parsed.data } : null;
}

/**
 * Yields the frames of a response body, one batch per network chunk (so a caller can tell the
 * burst of a catch-up from the live events that follow). Ends when the body ends; throws when the
 * connection breaks (or the signal aborts the read).
 */
export async function* readSseBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // A frame cut off by the end of the body is dropped (as the SSE standard says): its
      // position was never reached, so a reattach asks for it again.
      if (done) return;
      const frames = parser.push(decoder.decode(value, { stream: true }));
      if (frames.length) yield frames;
    }
  } finally {
    // Leaving early (a superseded stream) must release the connection.
    reader.cancel().catch(() => undefined);
  }
}
