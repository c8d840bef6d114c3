"""The data-quality stage turns off GX's per-batch fingerprint (a hash of the whole frame, twice
per suite, that nothing reads): this fails if a GX upgrade drops the knob it uses."""

from pathlib import Path


def test_gx_still_has_the_fingerprint_threshold():
    # imported here, not at collection: every xdist worker collects this file, and GX's import is
    # seconds of CPU that no other quick-tier test pays; as the quality stage imports it (no pyspark)
    from flows.quality.suites import import_gx

    import_gx()
    from great_expectations.execution_engine import pandas_execution_engine

    assert isinstance(pandas_execution_engine.HASH_THRESHOLD, int | float)
    source = Path(pandas_execution_engine.__file__).read_text()
    assert "df.memory_usage().sum() < HASH_THRESHOLD" in source
