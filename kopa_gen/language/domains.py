"""specs/domains.yaml: the benchmark's domains, as data. Platforms and tasks name one of its ids."""

from __future__ import annotations

from pathlib import Path

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import Domains
from kopa_gen.language.source import YamlError, load_yaml, validate_model

FILE = Path("specs") / "domains.yaml"


def load_held_out(root: Path) -> tuple[str, ...]:
    """The platforms of the declared held-out split (none when the file or the split is missing; `load_domains`
    reports a broken file)."""
    try:
        src = load_yaml(root / FILE, root)
    except (YamlError, OSError):
        return ()
    diags = Diagnostics()
    spec = validate_model(Domains, src.data, src, (), diags)
    return tuple(spec.held_out.platforms) if spec is not None and spec.held_out is not None else ()


def load_domains(root: Path) -> tuple[list[str], list[Diagnostic]]:
    """The declared domain ids (in file order) and any problem with the file."""
    path = root / FILE
    if not path.exists():
        return [], [
            Diagnostic(
                str(FILE), "", "missing; declare the benchmark's domains there (see docs/platforms.md)"
            )
        ]
    try:
        src = load_yaml(path, root)
    except YamlError as exc:
        return [], exc.diagnostics
    diags = Diagnostics()
    spec = validate_model(Domains, src.data, src, (), diags)
    if spec is None:
        return [], diags.items
    ids: list[str] = []
    for i, domain in enumerate(spec.domains):
        if domain.id in ids:
            diags.items.append(src.diag(("domains", i, "id"), f"domain {domain.id!r} is declared twice"))
        ids.append(domain.id)
    return ids, diags.items
