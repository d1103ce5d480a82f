CREATE TABLE `deployment` (
	`slot` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "deployment_one_row" CHECK("deployment"."slot" = 1)
);
