-- The ledger indexes now hold only the rows the collector looks for. Over all rows, SQLite searched the
-- doomed_at index for "doomed_at is null" (nearly every row) when a create released its reservation
-- and on every collector pass: both walked the whole ledger (test/metadata/query-plans.test.ts).
DROP INDEX `blob_ledger_check_idx`;--> statement-breakpoint
DROP INDEX `blob_ledger_doomed_idx`;--> statement-breakpoint
CREATE INDEX `blob_ledger_check_idx` ON `blob_ledger` (`check_after`) WHERE "blob_ledger"."check_after" is not null;--> statement-breakpoint
CREATE INDEX `blob_ledger_doomed_idx` ON `blob_ledger` (`doomed_at`) WHERE "blob_ledger"."doomed_at" is not null;