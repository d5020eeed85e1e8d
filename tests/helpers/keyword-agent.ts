// A product server whose scripted model answers by the user's words, for tests that run many runs
// of a few kinds through the real route: the product's tools served in process, and a project with
// one open issue.
import { useScriptedModelEnv } from './agent';
import { type FakeServer, type ScriptedTurn, startFakeOpenAI } from './fake-models';
import { createIssue, createProject, type TestProject } from './fixtures';
import { startTestServer, type TestServer } from './http';

/**
 * A script keyed on the user's words (one model for runs of several kinds): a message with "read"
 * lists the issues, one with "approve" closes issue 1 (a change, held for approval); after a tool
 * result the model says "Done."; anything else gets a plain answer.
 */
function keywordTurn(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: ['Done.'] };
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('read')) return { toolCalls: [{ name: 'list_issues', args: {} }] };
  if (text.includes('approve')) return { toolCalls: [{ name: 'close_issue', args: { number: 1 } }] };
  return { text: ['Plain ', 'answer.'] };
}

export interface KeywordAgent {
  server: TestServer;
  model: FakeServer;
  project: TestProject;
  close(): Promise<void>;
}

/** Starts the model and the server (`env`: more settings) and creates the project. */
export async function startKeywordAgent(projectName: string, env: Record<string, string> = {}): Promise<KeywordAgent> {
  const model = await startFakeOpenAI((body) => keywordTurn(body));
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  // biome-ignore lint/correctness/useHookAtTopLevel: a test helper named `use…`, not a React hook.
  useScriptedModelEnv(model.url, env);
  const server = await startTestServer();
  const project = await createProject(projectName);
  await createIssue(project.id, { title: 'Keep me open' });
  return {
    server,
    model,
    project,
    close: async () => {
      await server.close();
      await model.close();
    },
  };
}
