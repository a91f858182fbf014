"""The seeded world database (SQLite) that the sandbox serves: generators, builder, cache."""
