ALTER TABLE `resources` ADD `width` integer;--> statement-breakpoint
ALTER TABLE `resources` ADD `height` integer;