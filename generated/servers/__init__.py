"""Generated code (kopa-gen build). Do not edit; change specs/ and rebuild."""
