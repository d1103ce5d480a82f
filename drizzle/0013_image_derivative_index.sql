CREATE TABLE `image_derivatives` (
	`key` text PRIMARY KEY NOT NULL,
	`size` integer NOT NULL,
	`last_used_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `image_derivatives_last_used_idx` ON `image_derivatives` (`last_used_at`,`key`);