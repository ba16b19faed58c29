"""Corpus: a self-hosted knowledge base shared by coding agents and people."""
