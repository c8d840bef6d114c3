-- The first and last of each staged time inside the window of valid times: DST switches are looked
-- for between them only (the others are quarantined; a time in 1970 would cost a search through
-- decades of offsets).
select
    min(submit_at) filter (submit_at between {{ param("earliest") }} and {{ param("latest") }}) as first_submit,
    max(submit_at) filter (submit_at between {{ param("earliest") }} and {{ param("latest") }}) as last_submit,
    min(eligible_at) filter (eligible_at between {{ param("earliest") }} and {{ param("latest") }}) as first_eligible,
    max(eligible_at) filter (eligible_at between {{ param("earliest") }} and {{ param("latest") }}) as last_eligible,
    min(start_at) filter (start_at between {{ param("earliest") }} and {{ param("latest") }}) as first_start,
    max(start_at) filter (start_at between {{ param("earliest") }} and {{ param("latest") }}) as last_start,
    min(end_at) filter (end_at between {{ param("earliest") }} and {{ param("latest") }}) as first_end,
    max(end_at) filter (end_at between {{ param("earliest") }} and {{ param("latest") }}) as last_end
from attempts_staged
