"""Explain one job or one node from the built warehouse (`reliability-report explain`, `node`): a
job's attempts with the outcome the taxonomy gave each and the evidence that decided it; a node's
faults, outages, the failures it caused and its lemon signals month by month. Read only: no build,
no Prefect run (flows/explain/warehouse.py opens the warehouse); the same typed answer
(flows/explain/explanation_types.py) is the terminal's text, the --json document and the archive's
pages (flows/explain/pages.py)."""
