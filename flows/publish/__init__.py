"""Publishing a cluster's months where operators already look: OpenMetrics for Prometheus (each
report's `metrics.prom`, the backfill file of every built month, the Pushgateway), the Grafana
dashboard over those series (`grafana-dashboard.json`), and the browsable archive of every report
(`reports/index.html`).

Everything here reads the report directories the pipeline wrote (metrics.json): it computes no
figure, it only renames, rescales to base units and formats them.
"""
