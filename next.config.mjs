// @ts-check
// JavaScript, not TypeScript: `next start` transpiles a next.config.ts with its native compiler,
// which then stays loaded in every server process (about 24 MB of resident memory).

// The production build is webpack's (`npm run build` is `next build --webpack`): Turbopack's server
// output gives every page and route handler its own copy of the code they share, and a server that
// has served three pages holds three copies of it (about 25 MB more memory per instance; see
// docs/performance.md). `next dev` stays on Turbopack.

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Packages that load Wasm, native bindings or large runtimes from disk stay outside the bundle.
  serverExternalPackages: [
    '@electric-sql/pglite',
    'pglite-prisma-adapter',
    '@prisma/client',
    '@prisma/adapter-pg',
    'pg',
    '@mastra/core',
    '@modelcontextprotocol/sdk',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/exporter-trace-otlp-http',
    // Image decoding (native) and the S3 client (loaded only when an object store is configured).
    'sharp',
    '@aws-sdk/client-s3',
  ],
  // The build type-checks the app only; `npm run typecheck` covers the tests and scripts too. CI
  // runs that wider check first and sets NEXT_BUILD_SKIP_TYPECHECK=1 so the build does not repeat it.
  typescript: {
    tsconfigPath: 'tsconfig.build.json',
    ignoreBuildErrors: process.env.NEXT_BUILD_SKIP_TYPECHECK === '1',
  },
  experimental: {
    // Source maps of the server's bundles, as Turbopack writes them by default: production stack
    // traces (`NODE_OPTIONS=--enable-source-maps`) and CPU profiles map back to the sources.
    serverSourceMaps: true,
  },
  poweredByHeader: false,
  typedRoutes: false,
  devIndicators: false,
};

export default nextConfig;
