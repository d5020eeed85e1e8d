/**
 * The plain Node floor of `npm run bench:next`: the bare agent of ./floor.ts streamed as AG-UI by a
 * `node:http` server in a process of its own (no Next.js, no authentication, no database). Listens
 * on 127.0.0.1:$PORT and prints `listening` when it does.
 */
import http from 'node:http';
import { FloorInputError, floorEvents, parseFloorRequest, SSE_HEADERS } from './floor';

const server = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let prompt: string;
  try {
    ({ prompt } = parseFloorRequest(Buffer.concat(chunks).toString('utf8')));
  } catch (err) {
    if (!(err instanceof FloorInputError)) throw err;
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'BAD_REQUEST', message: err.message } }));
    return;
  }
  res.writeHead(200, SSE_HEADERS);
  for await (const frame of floorEvents(prompt)) res.write(frame);
  res.end();
});

server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
