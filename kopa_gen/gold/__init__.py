"""Gold execution: a task's chain run in the sandbox, linted, its evidence and statistics (below the compiler,
which writes the fixtures, and below the scorers, which read them)."""
