CREATE TABLE `tus_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`fields` text NOT NULL,
	`length` integer NOT NULL,
	`offset` integer DEFAULT 0 NOT NULL,
	`parts` text DEFAULT '[]' NOT NULL,
	`owner` text,
	`owner_issuer` text,
	`resource_uid` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tus_uploads_expires_idx` ON `tus_uploads` (`expires_at`);