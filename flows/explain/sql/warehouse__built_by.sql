-- What built the warehouse (flows/warehouse/schema_version.py).
select
    schema_version,
    tool_version
from meta.built_by
