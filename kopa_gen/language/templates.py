"""The trajectory templates (`specs/templates/<pattern>.yaml`): one file per EDGE pattern, each carrying the
Korean wording the offline query writer fills in. `kopa-gen build` writes generated/templates/<pattern>.json.

The six patterns: seq (one value crosses the junction), fan (2..φ values, φ=5, one downstream call per value,
in parallel), drv (more than φ values; a deterministic reduction keeps at most φ), sem (two different tools fed
the same upstream value, in parallel), cmp (one tool called with two values of one argument, results compared)
and cond (branch on an intermediate result).

Wording is jinja2 (`{{ slot }}`, `{% if args %}...{% endif %}`), rendered with StrictUndefined. Each part of a
template may use only the slots its pattern provides (`SLOTS`); any other name is a load error:

    part        pattern  slots
    queries     every    subject, tool, args, ask
                fan      + count, key
                drv      + reduction, key
                sem      + tool2, args2, ask2
                cmp      + vary, values, labels
                cond     + condition, tool2, args2, ask2
    asks        every    tool, field, count, labels
    reductions  drv      key, pivot
    conditions  cond     subject, what, pivot

subject: the starting entity ("회사명이 '삼성전자'인 회사"); tool/tool2: Korean title of the final tool(s);
args/args2: its literal arguments as a Korean phrase, possibly empty; ask/ask2: the rendered `asks` entry;
field: the answered field; count: number of values handed over; labels: the candidates an arg-answer names;
key: the handed-over (drv: reduced) field; reduction/condition: the rendered `reductions`/`conditions` entry;
pivot: the threshold or value; what: the measured quantity of a condition; vary: the varied argument;
values: its two values as one phrase. Every query must also use `REQUIRED` of its pattern."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal, get_args

import jinja2
import jinja2.meta
from pydantic import Field, ValidationInfo, field_validator

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.particles import attach_particles
from kopa_gen.language.source import Loc, Source, YamlError, load_yaml, validate_model

Pattern = Literal["seq", "fan", "drv", "sem", "cmp", "cond"]
AskKind = Literal["count", "value", "max", "min", "sum", "list", "diff", "argmax", "argmin"]
Reduction = Literal["max", "min", "gte", "lte", "eq", "after", "mode"]
Condition = Literal["gt", "lte"]
Part = Literal["queries", "asks", "reductions", "conditions"]

PATTERNS: tuple[Pattern, ...] = get_args(Pattern)
ASK_KINDS: tuple[AskKind, ...] = get_args(AskKind)
REDUCTIONS: tuple[Reduction, ...] = get_args(Reduction)
CONDITIONS: tuple[Condition, ...] = get_args(Condition)

_QUERY = ("subject", "tool", "args", "ask")
_ASKS = ("tool", "field", "count", "labels")
SLOTS: dict[Pattern, dict[Part, tuple[str, ...]]] = {
    "seq": {"queries": _QUERY, "asks": _ASKS},
    "fan": {"queries": (*_QUERY, "count", "key"), "asks": _ASKS},
    "drv": {"queries": (*_QUERY, "reduction", "key"), "asks": _ASKS, "reductions": ("key", "pivot")},
    "sem": {"queries": (*_QUERY, "tool2", "args2", "ask2"), "asks": _ASKS},
    "cmp": {"queries": (*_QUERY, "vary", "values", "labels"), "asks": _ASKS},
    "cond": {
        "queries": (*_QUERY, "condition", "tool2", "args2", "ask2"),
        "asks": _ASKS,
        "conditions": ("subject", "what", "pivot"),
    },
}
"""The slots each part of a pattern's template may use (see the module docstring for their meaning)."""

REQUIRED: dict[Pattern, tuple[str, ...]] = {
    "seq": ("subject", "ask"),
    "fan": ("subject", "ask"),
    "drv": ("subject", "reduction", "ask"),
    "sem": ("subject", "ask", "ask2"),
    "cmp": ("subject", "values", "ask"),
    "cond": ("condition", "ask", "ask2"),
}
"""Slots every query of a pattern must use, so no query drops its starting point, its question or its shape."""


class Template(StrictModel):
    """The Korean wording of one EDGE pattern, filled in by the offline query writer."""

    pattern: Pattern = Field(description="The EDGE pattern; the file is specs/templates/<pattern>.yaml.")
    description: str = Field(
        min_length=1, description="What the pattern teaches a model (English, for reviewers)."
    )
    queries: list[str] = Field(
        min_length=1,
        description="Korean query wordings (jinja2, `{{ slot }}`); the writer picks one by seed. Must read well "
        "when `args` is empty.",
    )
    asks: dict[AskKind, str] = Field(
        description="Korean wording of the question, per answer kind (jinja2); every kind is required, e.g. "
        "count: '{{ tool }} 결과는 모두 몇 건인가요?'.",
    )
    reductions: dict[Reduction, str] = Field(
        default_factory=dict,
        description="drv only, every kind required: Korean wording of the reduction that keeps at most φ values, "
        "e.g. gte: '{{ key }}이(가) {{ pivot }} 이상인'.",
    )
    conditions: dict[Condition, str] = Field(
        default_factory=dict,
        description="cond only, both required: Korean wording of the branch condition, e.g. "
        "gt: '{{ subject }}의 {{ what }}이(가) {{ pivot }}보다 많으면'.",
    )

    @field_validator("asks", "reductions", "conditions", mode="after")
    @classmethod
    def _canonical_order(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        # Generated JSON lists the kinds in their declared order, whatever order the spec wrote them in.
        kinds = {"asks": ASK_KINDS, "reductions": REDUCTIONS, "conditions": CONDITIONS}[info.field_name or ""]
        return {k: value[k] for k in kinds if k in value}

    def parts(self) -> list[tuple[Loc, Part, str]]:
        """Every jinja2 text of the template with its field path and part."""
        out: list[tuple[Loc, Part, str]] = [
            (("queries", i), "queries", q) for i, q in enumerate(self.queries)
        ]
        out += [(("asks", k), "asks", v) for k, v in self.asks.items()]
        out += [(("reductions", k), "reductions", v) for k, v in self.reductions.items()]
        out += [(("conditions", k), "conditions", v) for k, v in self.conditions.items()]
        return out


class SlotError(ValueError):
    """A template was rendered without a slot it uses."""


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


@functools.lru_cache(maxsize=1024)
def _compiled(text: str) -> tuple[jinja2.Template, frozenset[str]]:
    return _ENV.from_string(text), frozenset(slot_names(text))


def slot_names(text: str) -> set[str]:
    """The slots a template text uses (raises jinja2.TemplateSyntaxError on bad syntax)."""
    return set(jinja2.meta.find_undeclared_variables(_ENV.parse(text)))


def render(text: str, **slots: str) -> str:
    """Fill a template text. Every slot it uses must be given (an empty string is fine); runs of whitespace
    collapse to one space, so an empty slot leaves no gap; particles written in both forms (`을(를)`) take the
    form that fits the word before them (kopa_gen.language.particles)."""
    template, used = _compiled(text)
    missing = sorted(used - slots.keys())
    if missing:
        given = ", ".join(sorted(slots)) or "none"
        raise SlotError(
            f"template {text!r} needs slot(s) {', '.join(missing)}, which were not given (given: {given})"
        )
    return attach_particles(" ".join(template.render(slots).split()))


def load_templates(root: Path) -> tuple[dict[str, Template], list[Diagnostic]]:
    """Every specs/templates/<pattern>.yaml, validated (fields, the pattern's shape, slots, jinja2 syntax);
    returns {file: template} in pattern order and all diagnostics. A project without specs/templates/ has no
    templates; once the folder exists, every pattern needs its file."""
    folder = root / "specs" / "templates"
    if not folder.is_dir():
        return {}, []
    diags = Diagnostics()
    found: dict[str, tuple[str, Template]] = {}
    present: set[str] = set()
    for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
        name = path.relative_to(root).as_posix()
        if path.suffix != ".yaml" or path.stem not in PATTERNS:
            diags.error(
                name,
                "",
                f"not a pattern template; name it after its pattern: {', '.join(f'{p}.yaml' for p in PATTERNS)}",
            )
            continue
        present.add(path.stem)
        try:
            src = load_yaml(path, root)
        except YamlError as exc:
            diags.items.extend(exc.diagnostics)
            continue
        template = validate_model(Template, src.data, src, (), diags)
        if template is None:
            continue
        if template.pattern != path.stem:
            diags.items.append(
                src.diag(("pattern",), f"file must be specs/templates/{template.pattern}.yaml")
            )
            continue
        problems = check_template(template, src)
        diags.extend(problems)
        if not problems:
            found[template.pattern] = (src.file, template)
    for pattern in PATTERNS:
        if pattern not in present:
            diags.error(
                f"specs/templates/{pattern}.yaml",
                "",
                f"no template for pattern {pattern}; every EDGE pattern needs one (see specs/templates/README.md)",
            )
    return dict(found[p] for p in PATTERNS if p in found), diags.items


def check_template(template: Template, src: Source) -> list[Diagnostic]:
    """The pattern's shape (which wordings it must and must not have) and every text's syntax and slots."""
    out: list[Diagnostic] = []
    pattern = template.pattern
    missing = [k for k in ASK_KINDS if k not in template.asks]
    if missing:
        out.append(src.diag(("asks",), f"missing ask kinds {', '.join(missing)}; every kind needs a wording"))
    for part, kinds, owner in (("reductions", REDUCTIONS, "drv"), ("conditions", CONDITIONS, "cond")):
        given: dict[str, str] = getattr(template, part)
        if pattern != owner and given:
            out.append(src.diag((part,), f"only a {owner} template has {part}; remove them"))
        elif pattern == owner and (absent := [k for k in kinds if k not in given]):
            out.append(
                src.diag((part,), f"missing {part} {', '.join(absent)}; a {owner} template needs every kind")
            )
    for loc, part, text in template.parts():
        try:
            used = slot_names(text)
        except jinja2.TemplateSyntaxError as exc:
            where = f" (line {exc.lineno} of the text)" if "\n" in text.strip() else ""
            out.append(src.diag(loc, f"jinja2 syntax error{where}: {exc.message}"))
            continue
        if part not in SLOTS[pattern]:
            continue  # already reported: this pattern has no such part
        allowed = SLOTS[pattern][part]
        suffix = "" if part == "queries" else f" {part}"
        for slot in sorted(used - set(allowed)):
            out.append(
                src.diag(
                    loc,
                    f"unknown slot {{{{ {slot} }}}}; slots of {pattern}{suffix}: {', '.join(sorted(allowed))}",
                )
            )
        if part == "queries" and (unused := [s for s in REQUIRED[pattern] if s not in used]):
            out.append(
                src.diag(
                    loc,
                    f"never uses {', '.join(f'{{{{ {s} }}}}' for s in unused)}; "
                    f"every {pattern} query must use {', '.join(REQUIRED[pattern])}",
                )
            )
    return out
