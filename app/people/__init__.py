"""People and agents: accounts, roles and (with the people issue) their administration."""
