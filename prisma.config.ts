import { defineConfig } from 'prisma/config';

// The datasource URL is only used by Prisma CLI commands that talk to a database; this project
// applies its SQL migrations with its own applier (scripts/db-migrate.ts), so generation needs none.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations', seed: 'tsx scripts/db-seed.ts' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/unused' },
});
