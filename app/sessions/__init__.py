"""Browser sessions: the signed cookie, the sessions table, opening, touching and ending them."""
