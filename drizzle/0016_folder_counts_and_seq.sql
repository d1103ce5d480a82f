CREATE TABLE `folder_counts` (
	`tenant_id` text NOT NULL,
	`folder` text NOT NULL,
	`resources` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `folder`)
);
--> statement-breakpoint
ALTER TABLE `resources` ADD `seq` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `resources_seq_unique` ON `resources` (`seq`);--> statement-breakpoint
-- Hand-written from here (drizzle-kit has no triggers or virtual tables; issue 38).
-- resources_fts keyed on the rowid, which is no stable key of `resources` (no INTEGER PRIMARY KEY):
-- a dump and restore or a table rebuild (the usual way to change a SQLite column) renumbers it, and
-- SQLite documents that VACUUM may; the index would then point at other rows. It now keys on `seq`,
-- a column of its own that every copy keeps. Rebuilt, as its key changes.
DROP TRIGGER `resources_fts_insert`;--> statement-breakpoint
DROP TRIGGER `resources_fts_delete`;--> statement-breakpoint
DROP TRIGGER `resources_fts_update`;--> statement-breakpoint
DROP TABLE `resources_fts`;--> statement-breakpoint
UPDATE `resources` SET `seq` = `rowid`;--> statement-breakpoint
CREATE VIRTUAL TABLE `resources_fts` USING fts5(
  `name`, `title`, `description`, `alt_text`, `tags`,
  content = 'resources', content_rowid = 'seq',
  tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
--> statement-breakpoint
-- A new row's seq: the highest so far + 1 (one step down resources_seq_unique), unless the INSERT gave
-- one (a restore); then its text is indexed under it.
CREATE TRIGGER `resources_fts_insert` AFTER INSERT ON `resources` BEGIN
  UPDATE `resources` SET `seq` = (SELECT coalesce(max(`seq`), 0) + 1 FROM `resources`)
  WHERE `rowid` = NEW.`rowid` AND NEW.`seq` IS NULL;
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  SELECT `seq`, `name`, `title`, `description`, `alt_text`, `tags` FROM `resources` WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `resources_fts_delete` AFTER DELETE ON `resources` BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES ('delete', OLD.`seq`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `resources_fts_update` AFTER UPDATE OF `name`, `title`, `description`, `alt_text`, `tags` ON `resources` BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES ('delete', OLD.`seq`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`);
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES (NEW.`seq`, NEW.`name`, NEW.`title`, NEW.`description`, NEW.`alt_text`, NEW.`tags`);
END;
--> statement-breakpoint
INSERT INTO `resources_fts` (`resources_fts`) VALUES ('rebuild');--> statement-breakpoint
-- folder_counts: a live top-level resource counts in its folder. Each trigger runs inside the statement
-- that writes the resource (create, soft delete, move, purge), so concurrent writers and D1 batches keep
-- the counts exact; a folder whose count reaches 0 loses its row (the listing shows only folders in use).
CREATE TRIGGER `folder_counts_insert` AFTER INSERT ON `resources`
WHEN NEW.`deleted_at` IS NULL AND NEW.`parent_uid` IS NULL BEGIN
  INSERT INTO `folder_counts` (`tenant_id`, `folder`, `resources`) VALUES (NEW.`tenant_id`, NEW.`folder`, 1)
  ON CONFLICT (`tenant_id`, `folder`) DO UPDATE SET `resources` = `resources` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `folder_counts_delete` AFTER DELETE ON `resources`
WHEN OLD.`deleted_at` IS NULL AND OLD.`parent_uid` IS NULL BEGIN
  UPDATE `folder_counts` SET `resources` = `resources` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `folder` = OLD.`folder`;
  DELETE FROM `folder_counts` WHERE `tenant_id` = OLD.`tenant_id` AND `folder` = OLD.`folder` AND `resources` <= 0;
END;
--> statement-breakpoint
-- Out of the old place if it counted there, into the new one if it counts there (the same place: no change).
CREATE TRIGGER `folder_counts_update` AFTER UPDATE OF `tenant_id`, `folder`, `deleted_at`, `parent_uid` ON `resources` BEGIN
  UPDATE `folder_counts` SET `resources` = `resources` - 1
  WHERE OLD.`deleted_at` IS NULL AND OLD.`parent_uid` IS NULL AND `tenant_id` = OLD.`tenant_id` AND `folder` = OLD.`folder`;
  DELETE FROM `folder_counts` WHERE `tenant_id` = OLD.`tenant_id` AND `folder` = OLD.`folder` AND `resources` <= 0;
  INSERT INTO `folder_counts` (`tenant_id`, `folder`, `resources`)
  SELECT NEW.`tenant_id`, NEW.`folder`, 1 WHERE NEW.`deleted_at` IS NULL AND NEW.`parent_uid` IS NULL
  ON CONFLICT (`tenant_id`, `folder`) DO UPDATE SET `resources` = `resources` + 1;
END;
--> statement-breakpoint
-- The counts of the resources from before.
INSERT INTO `folder_counts` (`tenant_id`, `folder`, `resources`)
SELECT `tenant_id`, `folder`, count(*) FROM `resources`
WHERE `deleted_at` IS NULL AND `parent_uid` IS NULL GROUP BY `tenant_id`, `folder`;
