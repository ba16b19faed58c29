"""Measurement: `corpus eval` (retrieval quality on a BEIR-layout folder) and `corpus bench`
(ingest rate and search latency on synthetic corpora). Both run the product's own services and
SQL, in a throwaway database."""
