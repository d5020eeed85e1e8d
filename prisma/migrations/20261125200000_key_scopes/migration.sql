-- Scopes of a project API key: which tools it may list and call (each tool needs one scope).
-- A new column defaults to no scope at all, so a row written without scopes grants nothing.
ALTER TABLE "ApiKey" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

-- Project keys created before scopes existed could call every tool: they keep exactly that, as
-- the explicit list of every tool scope of this release. In-app-agent keys stay empty: they act
-- with their user's current role.
UPDATE "ApiKey"
SET "scopes" = ARRAY[
    'project:read', 'issues:read', 'issues:write', 'issues:delete', 'comments:write', 'members:read', 'webhook:send'
]::TEXT[]
WHERE "kind" = 'PROJECT';
