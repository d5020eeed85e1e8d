import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { NextConfig } from 'next';

// The Next.js floor of `npm run bench:next`, built and started like the product (`next build`,
// `next start`). scripts/bench-next.ts builds it in a copy of this folder outside the repository
// (the product's own src/ would otherwise be taken for this app's instrumentation and proxy), with
// the repository's node_modules linked in; Turbopack's root must hold both.
const here = realpathSync(import.meta.dirname);
const modules = realpathSync(path.join(here, 'node_modules'));
let root = here;
while (path.relative(root, modules).startsWith('..')) root = path.dirname(root);

const nextConfig: NextConfig = {
  // As in the product: Mastra stays outside the bundle.
  serverExternalPackages: ['@mastra/core'],
  // `npx tsc --noEmit -p .` at the repository's root checks this folder's code.
  typescript: { ignoreBuildErrors: true },
  turbopack: { root },
  poweredByHeader: false,
};

export default nextConfig;
