-- What fct_attempts leaves out of an attempt's record, from its month's landing ({{ attempts }}, its
-- attempts.parquet): the exit code and signal, the host list and the AdminComment.
select
    source_file || '|' || source_line as record,
    exit_code,
    exit_signal,
    node_list,
    admin_comment
from {{ attempts }}
where
    source_line in (select unnest({{ param("lines") }}::bigint[]))
    and source_file || '|' || source_line in (select unnest({{ param("records") }}::varchar[]))
