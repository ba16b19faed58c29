"""Operations: backing up and restoring a Corpus database."""
