"""The OAuth 2.1 authorization server's rules and its tables: clients, consents, codes, tokens."""
