-- How many records are duplicates, not landed.
select coalesce(sum(dropped), 0) as duplicate_records from attempt_duplicates
