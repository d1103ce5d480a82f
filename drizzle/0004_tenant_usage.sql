CREATE TABLE `tenant_usage` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`bytes` integer DEFAULT 0 NOT NULL,
	`resources` integer DEFAULT 0 NOT NULL,
	`ingress_day` integer DEFAULT 0 NOT NULL,
	`ingress_bytes` integer DEFAULT 0 NOT NULL,
	`max_bytes` integer DEFAULT 0 NOT NULL,
	`max_resources` integer DEFAULT 0 NOT NULL,
	`max_ingress_bytes` integer DEFAULT 0 NOT NULL,
	CONSTRAINT "quota_bytes" CHECK("tenant_usage"."max_bytes" = 0 or "tenant_usage"."bytes" <= "tenant_usage"."max_bytes"),
	CONSTRAINT "quota_resources" CHECK("tenant_usage"."max_resources" = 0 or "tenant_usage"."resources" <= "tenant_usage"."max_resources"),
	CONSTRAINT "quota_ingress" CHECK("tenant_usage"."max_ingress_bytes" = 0 or "tenant_usage"."ingress_bytes" <= "tenant_usage"."max_ingress_bytes")
);
--> statement-breakpoint
INSERT INTO `tenant_usage` (`tenant_id`, `bytes`, `resources`) SELECT `tenant_id`, sum(`size`), sum(`parent_uid` is null) FROM `resources` GROUP BY `tenant_id`;
