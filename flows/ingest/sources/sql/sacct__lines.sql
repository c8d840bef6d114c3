-- Temp table sacct_lines: each line of a sacct dump read, split and typed. Template variable recovered:
-- false reads the file (parameter path; line_no NULL: a row's line is its rowid + 1, the table keeps
-- the file's order), true adds the rows of sacct_recovered_rows(line_no, parts) (the lines reassembled
-- in Python, sacct.read_sacct). Columns are found by the header (parameter header, the dump's field
-- names; a field the dump lacks reads as '', one it has as it is: the optimizer folds the choice).
-- Each line's kind (attempt, step, or odd: the wrong width, or blank), an odd line's text, the typed
-- staged columns (registry.STAGED_FIELDS, local times; state still a struct of state and uid until
-- the outer select) and the first field of an attempt that cannot be read (problem, NULL when none).
-- RE2 patterns: STATE_PATTERN and TRES_FORMAT are sacct.py's (it also tells XDMoD's layouts by them);
-- an Elapsed is [D-][HH:]MM:SS[.fff], checked whole, its numbers then cut out by position (cheaper
-- than captures), but read as an INTERVAL when it is what sacct prints for nearly every record,
-- [D-]HH:MM:SS (cheaper than a list of parts); an ExitCode is <code>:<signal>. A time is
-- YYYY-MM-DDTHH:MM:SS (or with a space) in the dump's zone, or followed by an offset (Z, +HH:MM,
-- +HHMM, +HH: SLURM_TIME_FORMAT with %z), then the wall time as written and <name>_offset (seconds
-- east of UTC; NULL for a local time) give the instant (job_records.finish_attempts); a zone's name
-- after a time, or an offset beyond 14 hours, is no time. JobIDRaw and NNodes are decimal digits,
-- a JobID as sacct prints one (123, 123_4, 123_[1-5%2], 123+1, or a step: 123.batch).
{%- macro wall_time(raw) -%}
try_strptime({{ raw }}, ['%Y-%m-%dT%H:%M:%S', '%Y-%m-%d %H:%M:%S'])
{%- endmacro %}
{%- macro offset_time(raw) -%}
case when length({{ raw }}) > 19 then regexp_extract({{ raw }}, '^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(?:(Z)|([+-])(0\d|1[0-4]):?([0-5]\d)?)$', ['time', 'z', 'sign', 'hours', 'minutes']) end
{%- endmacro %}
{% if recovered %}
insert into sacct_lines
{% else %}
create or replace temp table sacct_lines as
{% endif %}
with source_rows as (
    {% if recovered %}
    select
        line_no,
        parts
    from sacct_recovered_rows
    {% else %}
    select
        cast(null as bigint) as line_no,
        string_split(line, {{ param("delimiter") }}) as parts
    -- each line read whole (a separator never in sacct's output), so every row keeps its line
    -- number; rejected lines are kept in sacct_rejects
    from
        read_csv(
            {{ param("path") }},
            columns = { 'line': 'VARCHAR' }, header = false,
            delim = {{ param("line_sentinel") }}, quote = '', escape = '',
            new_line = {{ param("new_line") }}, auto_detect = false,
            buffer_size = {{ param("buffer_size") }},
            store_rejects = true, rejects_table = 'sacct_rejects',
            rejects_scan = 'sacct_reject_scans'
        )
    {% endif %}
)

select
    line_no,
    kind,
    odd_text,
    job_id,
    job_id_raw,
    job_name,
    user_name,
    account,
    partition,
    qos,
    nullif(state.state, '') as state,
    try_cast(nullif(state.uid, '') as bigint) as cancelled_by_uid,
    exit_code,
    exit_signal,
    submit_at,
    eligible_at,
    start_at,
    end_at,
    submit_at_offset,
    eligible_at_offset,
    start_at_offset,
    end_at_offset,
    elapsed_seconds,
    n_nodes,
    node_list,
    gpus,
    req_gpus,
    reason,
    failed_node,
    restarts,
    sluid,
    admin_comment,
    case
        when kind <> 'attempt' then null
        when state.state = ''
            then { 'field': 'State', 'value': raw_state, 'reason': 'expected STATE or ''CANCELLED by <uid>''' }
        when raw_exit_code <> '' and exit_code is null
            then { 'field': 'ExitCode', 'value': raw_exit_code, 'reason': 'expected <code>:<signal>' }
        when submit_at is null
            then {
                'field': 'Submit',
                'value': raw_submit,
                'reason': 'every attempt has a submit time, as YYYY-MM-DDTHH:MM:SS[+HH:MM]'
            }
        when job_id_raw is null
            then { 'field': 'JobIDRaw', 'value': raw_job_id_raw, 'reason': 'expected a job number (decimal digits)' }
        when not regexp_full_match(raw_job_id, '\d{1,19}(?:_(?:\d{1,19}|\[[0-9,%-]{1,1000}\])|\+\d{1,19})?')
            then {
                'field': 'JobID',
                'value': raw_job_id,
                'reason': 'expected a job id as sacct prints one: 123, 123_4, 123_[1-5], 123+1'
            }
        when eligible_at is null and raw_eligible not in ('', 'Unknown', 'None')
            then { 'field': 'Eligible', 'value': raw_eligible, 'reason': 'expected YYYY-MM-DDTHH:MM:SS[+HH:MM]' }
        when start_at is null and raw_start not in ('', 'Unknown', 'None')
            then { 'field': 'Start', 'value': raw_start, 'reason': 'expected YYYY-MM-DDTHH:MM:SS[+HH:MM]' }
        when end_at is null and raw_end not in ('', 'Unknown', 'None')
            then { 'field': 'End', 'value': raw_end, 'reason': 'expected YYYY-MM-DDTHH:MM:SS[+HH:MM]' }
        when elapsed_seconds is null
            then { 'field': 'Elapsed', 'value': raw_elapsed, 'reason': 'expected [D-]HH:MM:SS' }
        when n_nodes is null
            then { 'field': 'NNodes', 'value': raw_n_nodes, 'reason': 'expected a whole number (decimal digits)' }
        when restarts is null and raw_restarts <> ''
            then { 'field': 'Restarts', 'value': raw_restarts, 'reason': 'expected a whole number (decimal digits)' }
        {%- for tres, name in [("alloc_tres", "AllocTRES"), ("req_tres", "ReqTRES")] %}
        -- not a TRES list at all, so its GPU count cannot be known (checked only when no gres/gpu=N
        -- was found: a GPU job's list has one); a GPU entry whose count is not a whole number
        -- of at most 9 digits (more would overflow, and no job has that many)
        when untyped_{{ tres }} = '' and not regexp_full_match(raw_{{ tres }}, {{ param("tres_format") }})
            then { 'field': '{{ name }}', 'value': raw_{{ tres }}, 'reason': 'expected a TRES list: name=value,...' }
        when
            untyped_{{ tres }} = '' and contains(raw_{{ tres }}, 'gres/gpu')
            and regexp_matches(raw_{{ tres }}, '(?:^|,)gres/gpu(?::[^=,]*)?=(?:[^,]*[^0-9,][^,]*|\d{10,})?(?:,|$)')
            then { 'field': '{{ name }}', 'value': raw_{{ tres }}, 'reason': 'expected gres/gpu[:type]=<count>' }
        {%- endfor %}
    end as problem
from (
    select
        *,
        case
            when not regular then 'odd'
            when contains(raw_job_id, '.') then 'step'
            else 'attempt'
        end as kind,
        case when not regular then coalesce(array_to_string(parts, {{ param("delimiter") }}), '') end as odd_text,
        raw_job_id as job_id,
        case
            when regexp_full_match(raw_job_id_raw, '\d{1,19}') then cast(try_cast(raw_job_id_raw as bigint) as varchar)
        end as job_id_raw,
        raw_job_name as job_name,
        raw_user as user_name,
        raw_account as account,
        raw_partition as partition,
        raw_qos as qos,
        regexp_extract(raw_state, {{ param("state_pattern") }}, ['state', 'uid']) as state,
        try_cast(nullif(exit.code, '') as bigint) as exit_code,
        try_cast(nullif(exit.signal, '') as bigint) as exit_signal,
        -- NULL for Unknown and None too; a time with an offset: its wall time, and the offset
        {%- for name in ["submit", "eligible", "start", "end"] %}
        coalesce({{ wall_time("raw_" ~ name) }}, {{ wall_time(name ~ "_offset.time") }}) as {{ name }}_at,
        case
            when {{ name }}_offset.z = 'Z' then 0
            when {{ name }}_offset.sign <> ''
                then
                    (case when {{ name }}_offset.sign = '-' then -1 else 1 end)
                    * (
                        try_cast({{ name }}_offset.hours as bigint) * 3600
                        + coalesce(try_cast({{ name }}_offset.minutes as bigint), 0) * 60
                    )
        end as {{ name }}_at_offset,
        {%- endfor %}
        case
            when common_elapsed
                then cast(epoch(try_cast(replace(raw_elapsed, '-', ' days ') as interval)) as bigint)
            else
                ((days * 24 + coalesce(try_cast(clock[-3] as bigint), 0)) * 60 + try_cast(clock[-2] as bigint)) * 60
                + try_cast(clock[-1] as bigint)
        end as elapsed_seconds,
        case when regexp_full_match(raw_n_nodes, '\d{1,18}') then cast(raw_n_nodes as bigint) end as n_nodes,
        raw_node_list as node_list,
        -- the untyped gres/gpu=N is authoritative; typed entries (gres/gpu:h100=N) repeat it and are
        -- only summed (and checked) when no untyped entry exists; list_sum gives a HUGEINT, which
        -- would land as a DOUBLE
        case
            when untyped_alloc_tres <> '' then cast(untyped_alloc_tres as bigint)
            else cast(coalesce(list_sum(list_transform(
                regexp_extract_all(raw_alloc_tres, 'gres/gpu:[^=,]*=(\d{1,9})(?:,|$)', 1),
                lambda x: cast(x as bigint)
            )), 0) as bigint)
        end as gpus,
        case
            when raw_req_tres = '' then null
            when untyped_req_tres <> '' then cast(untyped_req_tres as bigint)
            else cast(coalesce(list_sum(list_transform(
                regexp_extract_all(raw_req_tres, 'gres/gpu:[^=,]*=(\d{1,9})(?:,|$)', 1),
                lambda x: cast(x as bigint)
            )), 0) as bigint)
        end as req_gpus,
        raw_reason as reason,
        -- the fields only newer Slurm versions print: NULL when absent or empty
        nullif(raw_failed_node, '') as failed_node,
        case when regexp_full_match(raw_restarts, '\d{1,18}') then cast(raw_restarts as bigint) end as restarts,
        nullif(raw_sluid, '') as sluid,
        nullif(raw_admin_comment, '') as admin_comment
    from (
        select
            *,
            -- clock (the H:M:S parts) and days of an Elapsed that is not the common form
            case
                when common_elapsed then null
                when regexp_full_match(raw_elapsed, '(?:\d+-)?(?:\d+:)?\d+:\d+(?:\.\d+)?')
                    then string_split(split_part(split_part(raw_elapsed, '-', -1), '.', 1), ':')
            end as clock,
            case
                when common_elapsed then null
                when contains(raw_elapsed, '-') then try_cast(split_part(raw_elapsed, '-', 1) as bigint)
                else 0
            end as days,
            regexp_extract(raw_exit_code, '^(\d+):(\d+)$', ['code', 'signal']) as exit,
            {%- for name in ["submit", "eligible", "start", "end"] %}
            {{ offset_time("raw_" ~ name) }} as {{ name }}_offset,
            {%- endfor %}
            -- a TRES list's GPU count: the digits after its first gres/gpu= up to the next comma ('' when
            -- not a whole number); cut out by position, as splitting the list costs twice as much
            case
                when strpos(raw_alloc_tres, 'gres/gpu=') > 0
                    then regexp_extract(
                        substr(raw_alloc_tres, strpos(raw_alloc_tres, 'gres/gpu=') + 9, 20), '^(\d{1,9})(?:,|$)', 1
                    )
                else ''
            end as untyped_alloc_tres,
            case
                when strpos(raw_req_tres, 'gres/gpu=') > 0
                    then regexp_extract(
                        substr(raw_req_tres, strpos(raw_req_tres, 'gres/gpu=') + 9, 20), '^(\d{1,9})(?:,|$)', 1
                    )
                else ''
            end as untyped_req_tres
        from (
            select
                *,
                regexp_full_match(raw_elapsed, '(?:\d+-)?\d+:[0-5]\d:[0-5]\d') as common_elapsed
            from (
                select
                    line_no,
                    parts,
                    regular,
                    {%- for name, field in [
                        ("job_id", "JobID"), ("job_id_raw", "JobIDRaw"), ("job_name", "JobName"), ("user", "User"),
                        ("account", "Account"), ("partition", "Partition"), ("qos", "QOS"), ("state", "State"),
                        ("exit_code", "ExitCode"), ("submit", "Submit"), ("eligible", "Eligible"),
                        ("start", "Start"), ("end", "End"), ("elapsed", "Elapsed"), ("n_nodes", "NNodes"),
                        ("node_list", "NodeList"), ("alloc_tres", "AllocTRES"), ("req_tres", "ReqTRES"),
                        ("reason", "Reason"), ("failed_node", "FailedNode"), ("restarts", "Restarts"),
                        ("sluid", "SLUID"), ("admin_comment", "AdminComment")
                    ] %}
                    case
                        when list_position({{ param("header") }}, '{{ field }}') is null then ''
                        else f[list_position({{ param("header") }}, '{{ field }}')]
                    end as raw_{{ name }}
                    {%- if not loop.last %},{% endif %}
                    {%- endfor %}
                from (
                    select
                        line_no,
                        parts,
                        -- JobName last (name_last): whatever follows the other columns is the name
                        case
                            when {{ param("name_last") }} and len(parts) > {{ param("width") }}
                                then
                                    parts[:{{ param("width") }} - 1]
                                    || [array_to_string(parts[{{ param("width") }}:], {{ param("delimiter") }})]
                            else parts
                        end as f,
                        coalesce(
                            case
                                when {{ param("name_last") }} then len(parts) >= {{ param("width") }}
                                else len(parts) = {{ param("width") }}
                            end,
                            false
                        ) as regular
                    from source_rows
                )
            )
        )
    )
)
