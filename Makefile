# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Both build the virtual environment from the committed lock first (uv, ~15 s cold, ~1 s warm);
# `make test` adds the optional Spark engine (requirements-spark.lock.txt, Java 17), which it tests.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat requirements.lock.txt pyproject.toml | cksum | cut -d' ' -f1)
# uv installs from its cache alone when the cache holds every locked package (seconds), from the
# index otherwise: online, uv revalidates each package with the index and, as pyspark is published
# as an sdist only, builds pyspark's wheel again each time (~30 s of the test command's set-up).
UV_INSTALL = $(BIN)/uv pip install -q --offline -p $(BIN)/python $(1) 2>/dev/null || $(BIN)/uv pip install -q -p $(BIN)/python $(1)

export PREFECT_HOME ?= $(CURDIR)/.prefect
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_LOGGING_LEVEL ?= WARNING
export DBT_SEND_ANONYMOUS_USAGE_STATS ?= false

# Test files run in parallel, one file per worker at a time (module fixtures build a month once);
# three workers on two cores: about a sixth of the time a worker waits (subprocesses, servers, sleeps).
# (Four were no faster: the suite is CPU-bound, 2026-11-29, bench/README.md.)
TEST_WORKERS ?= 3
# more pytest options, e.g. PYTEST_ARGS=--junitxml=junit.xml (bench/README.md's time of each test file)
PYTEST_ARGS ?=

.PHONY: setup setup-spark java demo demo-study test test-fast test-bench test-spark lint lock clean

setup: $(STAMP)

$(STAMP): requirements.lock.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version' 
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check uv
	$(call UV_INSTALL,--compile-bytecode -r requirements.lock.txt)
	$(call UV_INSTALL,--no-deps -e .)
	rm -f $(VENV)/.installed-* && touch $@

demo: setup
	$(BIN)/reliability-report demo

# The study of two simulated clusters over a year (README "A study over months and clusters").
demo-study: setup
	$(BIN)/reliability-report demo-study

# The optional Spark engine ([warehouse] engine = "spark", docs/engines.md):
# dbt-spark and pyspark at the versions of requirements-spark.lock.txt (the base lock plus these),
# and a Java runtime for local Spark. Not part of `make demo`: pyspark alone is ~450 MB.
SPARK_STAMP := $(VENV)/.spark-$(shell cat requirements-spark.lock.txt | cksum | cut -d' ' -f1)

setup-spark: setup $(SPARK_STAMP) java

$(SPARK_STAMP): requirements-spark.lock.txt
	$(call UV_INSTALL,--compile-bytecode -r requirements-spark.lock.txt)
	rm -f $(VENV)/.spark-* && touch $@

# Spark 4 runs on Java 17 or later; Debian's headless JRE when the machine has none.
java:
	@java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])' || { \
	    $(if $(filter 0,$(shell id -u)),,sudo )apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo -E )apt-get install -y -q \
	        --no-install-recommends openjdk-17-jre-headless; }

# The browser test drives Debian's chromium through playwright (which never downloads a browser here).
CHROMIUM := /usr/bin/chromium

$(CHROMIUM):
	$(if $(filter 0,$(shell id -u)),,sudo )apt-get update -q
	DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo -E )apt-get install -y -q \
	    --no-install-recommends chromium fonts-liberation

# The Prometheus tests (tests/test_publish_prometheus.py) start Debian's prometheus, promtool and
# prometheus-pushgateway themselves on 127.0.0.1 (the packages' systemd units never run in a container).
PROMETHEUS := /usr/bin/prometheus-pushgateway

$(PROMETHEUS):
	$(if $(filter 0,$(shell id -u)),,sudo )apt-get update -q
	DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo -E )apt-get install -y -q \
	    --no-install-recommends prometheus prometheus-pushgateway

# The slurmrestd tests (tests/test_slurm_live.py) start Debian's slurmrestd with auth/jwt beside the test
# cluster (tests/slurm/slurm_up.sh installs the cluster's other packages itself).
SLURMRESTD := /usr/sbin/slurmrestd

$(SLURMRESTD):
	$(if $(filter 0,$(shell id -u)),,sudo )apt-get update -q
	DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo -E )apt-get install -y -q \
	    --no-install-recommends slurmrestd slurm-wlm-jwt-plugin

# The dbt templater compiles the project against a throwaway warehouse (the profile needs a path);
# the readers' statements (flows/ingest/sources/sql/) are Jinja, not dbt: the same rules, their own templater.
# $(call SQLFLUFF,<processes>): each process lints its share of the files, after a start-up of its
# own (the dbt templater's parse of the project): 65 CPU-s in all with two processes, 53 with one.
SQLFLUFF = DBT_DUCKDB_PATH=$(CURDIR)/.sqlfluff-lint.duckdb $(BIN)/sqlfluff lint --processes $(1) dbt_project/models && \
	$(BIN)/sqlfluff lint --processes $(1) --templater jinja flows/ingest/sources/sql flows/explain/sql

# sqlfluff runs beside the tests, niced, in one process (the tests are CPU-bound: its fewest
# CPU-seconds, not its wall time, are what counts): its CPU goes into the gaps the tests leave
# (servers starting, subprocesses waited for) instead of 35 s before them; its output comes after
# theirs, and a lint that fails fails the target.
test: setup-spark $(CHROMIUM) $(PROMETHEUS) $(SLURMRESTD)
	$(BIN)/ruff check flows tests bench simulator
	$(BIN)/ruff format --check flows tests bench simulator
	lint_log=$$(mktemp); nice -n 10 sh -c '$(call SQLFLUFF,1)' > $$lint_log 2>&1 & lint=$$!; \
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not bench" $(PYTEST_ARGS); tests=$$?; \
	wait $$lint; linted=$$?; cat $$lint_log; rm -f $$lint_log; \
	[ $$linted = 0 ] || { echo "sqlfluff: the SQL lint failed (above)"; exit 1; }; exit $$tests

# The quick tier for the inner loop: readers, config, figures, templates, the dbt models' unit tests;
# no month builds, servers, Spark or browser (tests marked `slow`). `make test` runs everything.
# A test outside `slow` that builds a month, runs a flow or starts a server fails (tests/quick_tier.py).
test-fast: setup
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not slow" $(PYTEST_ARGS)

# The four heavy benches at a toy size (tests/test_bench_*.py: month, backfill, periods, Spark; minutes
# of CPU each, which took the test command past 15 minutes on two cores): run them before changing a
# bench or the stage signatures they call.
test-bench: setup-spark
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile -m bench $(PYTEST_ARGS)

# The Spark engine's tests alone (tests/test_spark.py, also part of `make test`).
test-spark: setup-spark
	$(BIN)/pytest -q -m spark tests/test_spark.py

lint: setup
	$(BIN)/ruff check flows tests bench simulator && $(BIN)/ruff format --check flows tests bench simulator
	$(call SQLFLUFF,2)

# Re-resolve the lock after changing requirements.in.
lock: setup
	$(BIN)/uv pip compile -q -p 3.11 requirements.in -o requirements.lock.txt
	$(BIN)/uv pip compile -q -p 3.11 requirements-spark.in -o requirements-spark.lock.txt

clean:
	rm -rf $(VENV) .prefect .prefect-* var reports dbt_project/target dbt_project/logs build dist *.egg-info
