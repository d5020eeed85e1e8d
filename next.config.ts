import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
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
  ],
  // The build type-checks the app only; `npm run typecheck` covers the tests and scripts too.
  typescript: { tsconfigPath: 'tsconfig.build.json' },
  poweredByHeader: false,
  typedRoutes: false,
  devIndicators: false,
};

export default nextConfig;
