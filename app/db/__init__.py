"""The database: engine and pool, table definitions, connection types, the embedded server."""
