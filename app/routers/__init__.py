"""HTTP transports: parse, call a service, shape the reply."""
