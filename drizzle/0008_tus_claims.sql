ALTER TABLE `tus_uploads` ADD `state` text DEFAULT 'pending' NOT NULL;--> statement-breakpoint
CREATE INDEX `tus_uploads_tenant_idx` ON `tus_uploads` (`tenant_id`,`state`);--> statement-breakpoint
-- Uploads finished before the state existed.
UPDATE `tus_uploads` SET `state` = 'finished' WHERE `resource_uid` IS NOT NULL;
--> statement-breakpoint
-- Unfinished uploads now hold their Upload-Length in their tenant's bytes (terminating or expiring one
-- gives it back): charge the ones already open. As in 0006, the stored bytes limit is cleared so a tenant
-- this puts over it does not fail the migration's CHECK; the next charge writes the limit again.
INSERT OR IGNORE INTO `tenant_usage` (`tenant_id`) SELECT DISTINCT `tenant_id` FROM `tus_uploads` WHERE `state` = 'pending';
--> statement-breakpoint
UPDATE `tenant_usage` SET `max_bytes` = 0, `bytes` = `bytes` + (
	SELECT coalesce(sum(`u`.`length`), 0) FROM `tus_uploads` `u` WHERE `u`.`tenant_id` = `tenant_usage`.`tenant_id` AND `u`.`state` = 'pending'
) WHERE `tenant_id` IN (SELECT `tenant_id` FROM `tus_uploads` WHERE `state` = 'pending');
