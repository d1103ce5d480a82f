CREATE TABLE `search_tenants` (
	`no` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `search_tenants_tenant_id_unique` ON `search_tenants` (`tenant_id`);--> statement-breakpoint
-- Hand-written from here (drizzle-kit has no triggers or virtual tables; issue 38's performance).
-- resources_fts is rebuilt as a contentless FTS5 table holding only what a search may find: live
-- top-level resources, each under the key `no × 2^40 + seq` (no: its tenant's search_tenants row).
-- One tenant's entries are then one rowid range, which FTS5 reads alone (no other tenant's row is
-- scanned), and a search by relevance ranks and pages on the index alone, without looking up a
-- resources row per hit (1M rows, a prefix with 11 100 hits: bench/search.ts). 2^40 bounds seq at
-- about 10^12 and tenants at 8 million, inside SQLite's 64-bit integers.
DROP TRIGGER `resources_fts_insert`;--> statement-breakpoint
DROP TRIGGER `resources_fts_delete`;--> statement-breakpoint
DROP TRIGGER `resources_fts_update`;--> statement-breakpoint
DROP TABLE `resources_fts`;--> statement-breakpoint
INSERT INTO `search_tenants` (`tenant_id`) SELECT DISTINCT `tenant_id` FROM `resources` ORDER BY `tenant_id`;--> statement-breakpoint
-- Contentless (content ''): the triggers below give FTS5 each row's text, and the old text to forget it.
CREATE VIRTUAL TABLE `resources_fts` USING fts5(
  `name`, `title`, `description`, `alt_text`, `tags`,
  content = '', tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
--> statement-breakpoint
-- A new row's seq as in 0016 (the highest so far + 1 unless the INSERT gave one); its tenant numbered
-- on first sight; indexed if a search may find it.
CREATE TRIGGER `resources_fts_insert` AFTER INSERT ON `resources` BEGIN
  UPDATE `resources` SET `seq` = (SELECT coalesce(max(`seq`), 0) + 1 FROM `resources`)
  WHERE `rowid` = NEW.`rowid` AND NEW.`seq` IS NULL;
  INSERT INTO `search_tenants` (`tenant_id`) VALUES (NEW.`tenant_id`) ON CONFLICT (`tenant_id`) DO NOTHING;
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  SELECT t.`no` * 1099511627776 + r.`seq`, r.`name`, r.`title`, r.`description`, r.`alt_text`, r.`tags`
  FROM `resources` r JOIN `search_tenants` t ON t.`tenant_id` = r.`tenant_id`
  WHERE r.`rowid` = NEW.`rowid` AND r.`deleted_at` IS NULL AND r.`parent_uid` IS NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `resources_fts_delete` AFTER DELETE ON `resources`
WHEN OLD.`deleted_at` IS NULL AND OLD.`parent_uid` IS NULL BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  SELECT 'delete', `no` * 1099511627776 + OLD.`seq`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`
  FROM `search_tenants` WHERE `tenant_id` = OLD.`tenant_id`;
END;
--> statement-breakpoint
-- Out of the index if it was findable, back in if it is (a soft delete only removes; a restore only adds).
CREATE TRIGGER `resources_fts_update`
AFTER UPDATE OF `name`, `title`, `description`, `alt_text`, `tags`, `tenant_id`, `deleted_at`, `parent_uid` ON `resources` BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  SELECT 'delete', `no` * 1099511627776 + OLD.`seq`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`
  FROM `search_tenants` WHERE `tenant_id` = OLD.`tenant_id` AND OLD.`deleted_at` IS NULL AND OLD.`parent_uid` IS NULL;
  INSERT INTO `search_tenants` (`tenant_id`) VALUES (NEW.`tenant_id`) ON CONFLICT (`tenant_id`) DO NOTHING;
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  SELECT `no` * 1099511627776 + NEW.`seq`, NEW.`name`, NEW.`title`, NEW.`description`, NEW.`alt_text`, NEW.`tags`
  FROM `search_tenants` WHERE `tenant_id` = NEW.`tenant_id` AND NEW.`deleted_at` IS NULL AND NEW.`parent_uid` IS NULL;
END;
--> statement-breakpoint
-- What a search may find today, in key order (FTS5 writes ascending keys without flushing between them).
INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
SELECT t.`no` * 1099511627776 + r.`seq`, r.`name`, r.`title`, r.`description`, r.`alt_text`, r.`tags`
FROM `resources` r JOIN `search_tenants` t ON t.`tenant_id` = r.`tenant_id`
WHERE r.`deleted_at` IS NULL AND r.`parent_uid` IS NULL
ORDER BY t.`no`, r.`seq`;
