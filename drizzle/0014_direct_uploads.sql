CREATE TABLE `direct_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`author` text NOT NULL,
	`media_type` text,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`blob_key` text NOT NULL,
	`duplicate` integer DEFAULT false NOT NULL,
	`token_sha256` text,
	`owner` text,
	`owner_issuer` text,
	`resource_uid` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `direct_uploads_expires_idx` ON `direct_uploads` (`expires_at`);