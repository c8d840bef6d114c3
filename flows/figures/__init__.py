"""Stage 4, figures: read a period's marts into the figures of metrics.json (MTTF, r_f, ETTR, lemons, the summary)."""
