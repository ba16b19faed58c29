"""Sources kept in sync: folders and git repositories (issue #35, docs/adr/0035)."""
