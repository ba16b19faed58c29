"""The answering agents (DESIGN.md §6): one entry point (`answer.py`) routes a question to the
fast agent or the deep orchestrator and yields one stream of events. They call the domain
services as the caller, never the queries."""
