"""The plan: composes the stages into one result (sections, uncertainty, serving, advice, starting configuration); the vectorized many-scenario path."""
