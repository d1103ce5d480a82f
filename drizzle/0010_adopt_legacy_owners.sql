CREATE TABLE `data_fixes` (
	`name` text PRIMARY KEY NOT NULL,
	`done_at` integer NOT NULL
);
--> statement-breakpoint
-- Hand-written: adopting rows from before owner_issuer needs the configured issuer, which a migration
-- cannot know (start-up does it: MetadataStore.adoptLegacyOwners). A database with no such row (every
-- new one) has nothing to adopt: the fix is recorded done here, and no start ever runs it.
INSERT INTO `data_fixes` (`name`, `done_at`)
SELECT 'adopt_legacy_owners', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
WHERE NOT EXISTS (SELECT 1 FROM `resources` WHERE `owner_issuer` IS NULL AND `owner` IS NOT NULL);
