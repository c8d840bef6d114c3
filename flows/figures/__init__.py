"""The figures of a period of one or more clusters, read from the marts: the month's report and the study."""
