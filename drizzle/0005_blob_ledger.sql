CREATE TABLE `blob_ledger` (
	`key` text PRIMARY KEY NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`touched_at` integer NOT NULL,
	`check_after` integer,
	`doomed_at` integer
);
--> statement-breakpoint
CREATE INDEX `blob_ledger_check_idx` ON `blob_ledger` (`check_after`);--> statement-breakpoint
CREATE INDEX `blob_ledger_doomed_idx` ON `blob_ledger` (`doomed_at`);
--> statement-breakpoint
-- Blobs stored before the ledger existed: every one a row references is recorded, unreserved.
INSERT OR IGNORE INTO `blob_ledger` (`key`, `pending`, `touched_at`)
SELECT `blob_key`, 0, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM `resources`
UNION SELECT `blob_key`, 0, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM `revisions`;
--> statement-breakpoint
-- A row may only point at a blob the ledger holds and no collector has claimed: the database itself
-- refuses the insert that would otherwise race a deletion (issue 11 §1).
CREATE TRIGGER `resources_blob_reserved_insert` BEFORE INSERT ON `resources`
WHEN NOT EXISTS (SELECT 1 FROM `blob_ledger` WHERE `key` = NEW.`blob_key` AND `doomed_at` IS NULL)
BEGIN SELECT RAISE(ABORT, 'BLOB_NOT_RESERVED'); END;
--> statement-breakpoint
CREATE TRIGGER `resources_blob_reserved_update` BEFORE UPDATE OF `blob_key` ON `resources`
WHEN NEW.`blob_key` IS NOT OLD.`blob_key`
  AND NOT EXISTS (SELECT 1 FROM `blob_ledger` WHERE `key` = NEW.`blob_key` AND `doomed_at` IS NULL)
BEGIN SELECT RAISE(ABORT, 'BLOB_NOT_RESERVED'); END;
