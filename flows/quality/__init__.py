"""Stage 3, quality: the Great Expectations suites over the landed records and the marts."""
