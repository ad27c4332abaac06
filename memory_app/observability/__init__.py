"""What operators watch: Prometheus metrics, JSON logs with request ids, health checks."""
