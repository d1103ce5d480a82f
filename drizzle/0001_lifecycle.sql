CREATE TABLE `locks` (
	`name` text PRIMARY KEY NOT NULL,
	`lock_id` text NOT NULL,
	`owner` text NOT NULL,
	`holder` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `locks_expires_idx` ON `locks` (`expires_at`);--> statement-breakpoint
CREATE TABLE `revisions` (
	`resource_uid` text NOT NULL,
	`revision` integer NOT NULL,
	`action` text NOT NULL,
	`name` text NOT NULL,
	`author` text NOT NULL,
	`media_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`blob_key` text NOT NULL,
	`actor` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`resource_uid`, `revision`)
);
--> statement-breakpoint
CREATE INDEX `revisions_blob_key_idx` ON `revisions` (`blob_key`);--> statement-breakpoint
-- Hand-edited after drizzle-kit: SQLite cannot add a NOT NULL column without a default, so the two
-- URI columns get '' and are backfilled below (a top-level resource's URI is `<uid>/<name>`).
ALTER TABLE `resources` ADD `context` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `path` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `parent_uid` text;--> statement-breakpoint
ALTER TABLE `resources` ADD `revision` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `deleted_at` integer;--> statement-breakpoint
UPDATE `resources` SET `context` = `uid`, `path` = `name` WHERE `context` = '';--> statement-breakpoint
INSERT INTO `revisions` (`resource_uid`, `revision`, `action`, `name`, `author`, `media_type`, `size`, `sha256`, `blob_key`, `actor`, `created_at`)
  SELECT `uid`, 1, 'create', `name`, `author`, `media_type`, `size`, `sha256`, `blob_key`, `owner`, `created_at` FROM `resources`;--> statement-breakpoint
CREATE UNIQUE INDEX `resources_context_path_unique` ON `resources` (`context`,`path`);--> statement-breakpoint
CREATE INDEX `resources_parent_idx` ON `resources` (`parent_uid`);