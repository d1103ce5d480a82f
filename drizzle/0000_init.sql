CREATE TABLE `resources` (
	`uid` text PRIMARY KEY NOT NULL,
	`short_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`author` text NOT NULL,
	`media_type` text NOT NULL,
	`external_uri` text,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`blob_key` text NOT NULL,
	`owner` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `resources_short_id_unique` ON `resources` (`short_id`);--> statement-breakpoint
CREATE INDEX `resources_tenant_created_idx` ON `resources` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `resources_blob_key_idx` ON `resources` (`blob_key`);