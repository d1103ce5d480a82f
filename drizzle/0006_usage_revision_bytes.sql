-- Stored bytes now count the content earlier revisions keep (updateResource charges new content in
-- full, purge gives all of it back): recount every tenant the same way. The stored bytes limit is
-- cleared so that a tenant the recount puts over it does not fail this migration's CHECK; the next
-- charge writes the limit again and then refuses new content until the tenant is back under it.
UPDATE `tenant_usage` SET `max_bytes` = 0, `bytes` = (
	SELECT coalesce(sum(`kept`.`size`), 0) FROM (
		SELECT `r`.`uid` AS `uid`, `r`.`blob_key` AS `blob_key`, `r`.`size` AS `size` FROM `resources` `r` WHERE `r`.`tenant_id` = `tenant_usage`.`tenant_id`
		UNION
		SELECT `v`.`resource_uid`, `v`.`blob_key`, `v`.`size` FROM `revisions` `v` JOIN `resources` `r` ON `r`.`uid` = `v`.`resource_uid` WHERE `r`.`tenant_id` = `tenant_usage`.`tenant_id`
	) AS `kept`
);
