"""The audit log: who changed what, written in the same transaction as the change."""
