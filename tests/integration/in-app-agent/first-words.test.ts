// An answer's first words reach the user as soon as the model has sent them. A model that answers
// at once sends a whole short answer in one read; the run writes a message's first words before it
// reads on through the rest (and before the run's end begins), instead of with all of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentUrl, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

// Fifty words, about 8 KB of the model's stream: one read of its socket.
const WORDS = Array.from({ length: 50 }, (_, i) => `word${i} `);

let server: TestServer;
let model: FakeServer;
let project: TestProject;

beforeAll(async () => {
  model = await startFakeOpenAI(() => ({ text: WORDS }));
  server = await startTestServer();
  project = await createProject('First words');
  useScriptedModelEnv(model.url);
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe("an answer's first words", () => {
  it('are written on their own, before the rest of the answer the model already sent', async () => {
    const res = await fetch(agentUrl(server.url, project.id), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url, cookie: project.users.MEMBER.cookie },
      body: JSON.stringify(userMessageBody('Say fifty words.')),
    });
    expect(res.status).toBe(200);
    // What the client received, read by read.
    const reads: string[] = [];
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads.push(decoder.decode(value, { stream: true }));
    }
    const all = reads.join('');
    expect(all).toContain('"RUN_FINISHED"');
    for (const w of WORDS) expect(all).toContain(JSON.stringify(w).slice(1, -1));
    const first = reads.findIndex((r) => r.includes('word0 '));
    expect(first).toBeGreaterThanOrEqual(0);
    // The read with the first word has none of the later ones: they were written after it.
    expect(reads[first]).not.toContain('word1 ');
    expect(reads[first]).not.toContain('word49 ');
    expect(reads.slice(first + 1).join('')).toContain('word49 ');
  });
});
