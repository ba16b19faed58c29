"""Who is calling: the Principal every service takes, and (later) how credentials resolve to it."""
