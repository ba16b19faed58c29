"""Who may do what: the `Principal` every service takes, the roles and kinds of accounts, and the
capability table with its one check, `Principal.require`. A leaf: every layer may import it,
and it imports no other domain."""
