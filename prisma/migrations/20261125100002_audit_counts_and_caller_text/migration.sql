-- Calls of a revoked or expired key are counted in one row per key and minute ("callCount"), and a
-- tool name that is not a registered tool is marked as the caller's text ("callerSuppliedTool").
ALTER TABLE "ToolCallAudit"
    ADD COLUMN "callerSuppliedTool" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "callCount" INTEGER NOT NULL DEFAULT 1;

-- Rows written before: any name outside the registry (as of this migration) and the server's own
-- placeholders came from the caller.
UPDATE "ToolCallAudit" SET "callerSuppliedTool" = true
WHERE "tool" NOT IN (
    'list_issues', 'get_issue', 'search_issues', 'list_members', 'list_labels', 'get_project_summary',
    'create_issue', 'update_issue', 'add_comment', 'assign_issue', 'close_issue', 'delete_issue',
    'notify_webhook', '(invalid)', '(empty)'
);
