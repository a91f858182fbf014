"""Episodes: the Session that policies act in and evaluators read from."""
