"""Stage 5, report: render the figures as HTML, email HTML, text, charts, exports and OpenMetrics."""
