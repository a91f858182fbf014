"""Table generators, one module per topic. Each module registers its generators with `@generator(name)`."""
