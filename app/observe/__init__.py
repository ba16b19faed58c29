"""What the process tells its operators: Prometheus metrics (`/metrics`) and the structured
lines of requests and agent runs. A leaf: services call its functions (one line each where the
work happens), and it imports no framework."""
