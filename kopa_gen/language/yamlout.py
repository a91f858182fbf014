"""Writing YAML that every reader reads back the same.

PyYAML follows YAML 1.1, so it leaves a string such as `00126380` plain (not a 1.1 number: a leading 0 means octal
there and 8 is no octal digit), and a YAML 1.2 reader then gets the number 126380. Strings that either version
could read as something else (a number, a boolean, null) are written quoted.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

# plain scalars that a YAML 1.2 core-schema or a YAML 1.1 reader resolves to a non-string
_NOT_TEXT = re.compile(
    r"""^(?:
        [-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?   # 42, 00126380, 1_000, 3.5, 1e3
      | [-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?                     # .5
      | [-+]?0[xob][0-9a-fA-F_]+                             # 0x1A, 0o17, 0b101
      | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?      # sexagesimal (1.1): 1:30
      | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
      | ~ | null | Null | NULL
      | y | Y | yes | Yes | YES | n | N | no | No | NO
      | true | True | TRUE | false | False | FALSE
      | on | On | ON | off | Off | OFF
    )$""",
    re.VERBOSE,
)


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _NOT_TEXT.match(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return dumper.represent_str(value)


_Dumper.add_representer(str, _text)


def dump_yaml(data: Any, width: int = 100) -> str:
    """`data` as block YAML (Unicode kept, keys in their order), number-like strings quoted."""
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=width)
