"""Stage 7, delivery: email, chat webhook and Pushgateway channels, each report sent once (the sent log)."""
