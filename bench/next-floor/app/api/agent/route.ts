// The Next.js floor's only route: the bare agent of ../../../floor.ts streamed as AG-UI.
import { FloorInputError, floorEvents, parseFloorRequest, SSE_HEADERS } from '../../../floor';

export const dynamic = 'force-dynamic';

export async function POST(req: Request): Promise<Response> {
  let prompt: string;
  try {
    ({ prompt } = parseFloorRequest(await req.text()));
  } catch (err) {
    if (!(err instanceof FloorInputError)) throw err;
    return Response.json({ error: { code: 'BAD_REQUEST', message: err.message } }, { status: 400 });
  }
  const events = floorEvents(prompt);
  const bytes = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await events.next();
      if (next.done) controller.close();
      else controller.enqueue(bytes.encode(next.value));
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}
