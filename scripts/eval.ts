/**
 * `npm run eval -- --dataset <name> --candidate <file.json> [--project <id>]`: runs every case of
 * a dataset against a candidate on this machine, with the database and model settings of the
 * environment, prints the JSON report and exits non-zero when a case fails (see
 * src/features/in-app-agent/server/eval-headless.ts).
 */
import { runEvalCommand } from '@/features/in-app-agent/server/eval-headless';
import { closeDb, getPrisma } from '@/server/db';

let code = 2;
try {
  code = await runEvalCommand(process.argv.slice(2), {
    prisma: await getPrisma(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
} catch (err) {
  process.stderr.write(`The experiment could not run: ${(err as Error).message}\n`);
  code = 2;
} finally {
  await closeDb().catch(() => undefined);
}
process.exit(code);
