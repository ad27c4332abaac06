"""Reads: querysets and read models, always through the access predicates."""
