ALTER TABLE `resources` ADD `title` text;--> statement-breakpoint
ALTER TABLE `resources` ADD `description` text;--> statement-breakpoint
ALTER TABLE `resources` ADD `alt_text` text;--> statement-breakpoint
ALTER TABLE `resources` ADD `tags` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `tag_keys` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `folder` text DEFAULT '/' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `metadata` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `metadata_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `resources` ADD `thumbhash` text;--> statement-breakpoint
CREATE INDEX `resources_tenant_folder_idx` ON `resources` (`tenant_id`,`folder`,`created_at`);--> statement-breakpoint
-- Hand-written (drizzle-kit has no virtual tables): the full-text index of searchResources (issue 38),
-- over the resources rows themselves (external content: the text is not stored twice). unicode61
-- folds case and, with remove_diacritics 2, accents; prefix '2 3' keeps `sun*` searches short.
CREATE VIRTUAL TABLE `resources_fts` USING fts5(
  `name`, `title`, `description`, `alt_text`, `tags`,
  content = 'resources', content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
--> statement-breakpoint
-- Kept in step by triggers, so every statement that writes a resource updates the index in its own
-- transaction (the creates' and updates' batches), on libSQL and D1 alike.
CREATE TRIGGER `resources_fts_insert` AFTER INSERT ON `resources` BEGIN
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES (NEW.`rowid`, NEW.`name`, NEW.`title`, NEW.`description`, NEW.`alt_text`, NEW.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `resources_fts_delete` AFTER DELETE ON `resources` BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES ('delete', OLD.`rowid`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `resources_fts_update` AFTER UPDATE OF `name`, `title`, `description`, `alt_text`, `tags` ON `resources` BEGIN
  INSERT INTO `resources_fts` (`resources_fts`, `rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES ('delete', OLD.`rowid`, OLD.`name`, OLD.`title`, OLD.`description`, OLD.`alt_text`, OLD.`tags`);
  INSERT INTO `resources_fts` (`rowid`, `name`, `title`, `description`, `alt_text`, `tags`)
  VALUES (NEW.`rowid`, NEW.`name`, NEW.`title`, NEW.`description`, NEW.`alt_text`, NEW.`tags`);
END;
--> statement-breakpoint
-- Resources from before: searchable by name at once.
INSERT INTO `resources_fts` (`resources_fts`) VALUES ('rebuild');
