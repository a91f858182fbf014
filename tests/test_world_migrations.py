"""Tables moved from Python generators to the world spec (static rows, a materialised query) hold exactly the rows
the Python generators made: (row count, sha256 of the rows in order) as measured on the world built by 4c333a8,
before the move. A change here is a change of the world, to be made on purpose."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from kopa_gen.world.build import BuiltWorld

BEFORE_THE_MOVE = {
    "fsc_industries": (36, "d2b09396c16c4925"),
    "fsc_accounts": (16, "5981c75ef3cb05ab"),
    "dart_indicator_defs": (22, "fdcf8a383572c9c7"),
    "edu_meal_kinds": (3, "0a6e8af47d60ac55"),
    "edu_grades": (6, "4d94e03a2b378f70"),
    "edu_special_rooms": (23, "353a5fde42010f43"),
    "edu_terms": (2, "86b940cfd2c1b110"),
}


@pytest.mark.parametrize("table", sorted(BEFORE_THE_MOVE))
def test_moved_tables_keep_their_rows(world: BuiltWorld, table: str) -> None:
    db = sqlite3.connect(f"file:{world.path}?mode=ro", uri=True)
    digest = hashlib.sha256()
    count = 0
    for row in db.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
        digest.update(repr(row).encode())
        count += 1
    assert (count, digest.hexdigest()[:16]) == BEFORE_THE_MOVE[table]
