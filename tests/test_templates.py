"""Trajectory templates: the real specs load clean and render for every pattern, broken inline templates give exact
errors, and generated/templates/ is byte-identical across builds and guarded by `--check`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kopa_gen.compile.build import build, check, file_hashes
from kopa_gen.language.templates import (
    ASK_KINDS,
    PATTERNS,
    SLOTS,
    SlotError,
    Template,
    load_templates,
    render,
)
from kopa_gen.project import Project, load_project
from tests.conftest import ROOT
from tests.toyspec import write_project

HEADER = "# yaml-language-server: $schema=../../generated/schemas/template.schema.json\n"

# One hand-written slot set per pattern: what the query writer would hand over for a junction.
SUBJECT = "회사명이 '삼성전자'인 회사"
SET = "회사명에 '삼성'이 들어간 상장회사"
EXTRA: dict[str, dict[str, str]] = {
    "seq": {},
    "fan": {"subject": SET, "count": "3", "key": "고유번호"},
    "drv": {"subject": SET, "key": "설립일"},
    "sem": {"tool2": "직원 현황", "args2": "사업연도 2025"},
    "cmp": {"vary": "사업연도", "values": "2024과 2025", "labels": "2024 사업연도와 2025 사업연도"},
    "cond": {"tool2": "직원 현황", "args2": ""},
}


def fill(template: Template, ask: str, args: str) -> list[str]:
    """Every query of a template rendered with every slot of its pattern filled."""
    slots = {"subject": SUBJECT, "tool": "단일회사 주요계정", "args": args, **EXTRA[template.pattern]}
    ask_slots = {"tool": slots["tool"], "field": "매출액", "count": "3", "labels": slots.get("labels", "")}
    slots["ask"] = render(template.asks[ask], **ask_slots)  # type: ignore[index]
    if template.pattern in ("sem", "cond"):
        slots["ask2"] = render(
            template.asks["sum"], **{**ask_slots, "tool": slots["tool2"], "field": "직원 수"}
        )
    if template.pattern == "drv":
        slots["reduction"] = render(template.reductions["gte"], key="자본금", pivot="1000억 원")
    if template.pattern == "cond":
        slots["condition"] = render(
            template.conditions["gt"], subject=SUBJECT, what="직원 수", pivot="1000명"
        )
    assert set(slots) == set(SLOTS[template.pattern]["queries"])
    return [render(q, **slots) for q in template.queries]


def test_real_templates_load_clean(project: Project) -> None:
    templates, diags = load_templates(ROOT)
    assert diags == []
    assert [t.pattern for t in templates.values()] == list(PATTERNS)
    assert list(templates) == [f"specs/templates/{p}.yaml" for p in PATTERNS]
    assert [t.pattern for _, t in project.templates] == list(PATTERNS)
    for file in templates:
        assert (ROOT / file).read_text(encoding="utf-8").startswith(HEADER)


def test_every_pattern_renders_with_all_slots(project: Project) -> None:
    for _, template in project.templates:
        assert 2 <= len(template.queries) <= 4
        assert tuple(template.asks) == ASK_KINDS
        for ask in ASK_KINDS:
            for args in ("사업연도 2025, 사업보고서", ""):
                for text in fill(template, ask, args):
                    assert "{" not in text and "()" not in text and "  " not in text, text
                    assert text.endswith(("?", ".")), text


def test_seq_query_renders_exactly(project: Project) -> None:
    seq = project.template("seq")
    assert fill(seq, "value", "사업연도 2025, 사업보고서")[0] == (
        "회사명이 '삼성전자'인 회사의 단일회사 주요계정을 사업연도 2025, 사업보고서 기준으로 조회하려고 "
        "합니다. 매출액을 알려 주세요."
    )
    assert fill(seq, "count", "")[0] == (
        "회사명이 '삼성전자'인 회사의 단일회사 주요계정을 조회하려고 합니다. "
        "단일회사 주요계정 결과는 모두 몇 건인가요?"
    )


def test_render_names_a_missing_slot() -> None:
    with pytest.raises(SlotError, match=r"needs slot\(s\) pivot, which were not given \(given: key\)"):
        render("{{ key }}이(가) {{ pivot }} 이상인", key="자본금")


ASKS = "{" + ", ".join(f'{k}: "{{{{ tool }}}} {k}"' for k in ASK_KINDS) + "}"


def write_seq(root: Path, *queries: str) -> Path:
    folder = root / "specs" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [HEADER.rstrip(), "pattern: seq", "description: tiny", f"asks: {ASKS}", "queries:"]
    lines += [f"  - {q!r}".replace("'", '"') for q in queries]
    (folder / "seq.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_unknown_slot_is_named_with_file_line_and_field(tmp_path: Path) -> None:
    write_seq(tmp_path, "{{ subject }}: {{ ask }}", "{{ subject }}의 {{ colour }}: {{ ask }}")
    _, diags = load_templates(tmp_path)
    seq = [d.render() for d in diags if d.file == "specs/templates/seq.yaml"]
    assert seq == [
        "specs/templates/seq.yaml:7: queries[1]: error: unknown slot {{ colour }}; slots of seq: args, ask, subject, tool"
    ]


def test_syntax_error_and_dropped_question_are_reported(tmp_path: Path) -> None:
    write_seq(tmp_path, "{{ subject }: {{ ask }}", "{{ subject }}의 {{ tool }}")
    _, diags = load_templates(tmp_path)
    assert [d.render() for d in diags if d.file == "specs/templates/seq.yaml"] == [
        "specs/templates/seq.yaml:6: queries[0]: error: jinja2 syntax error: unexpected '}'",
        "specs/templates/seq.yaml:7: queries[1]: error: never uses {{ ask }}; every seq query must use subject, ask",
    ]


def test_missing_pattern_file_is_reported(tmp_path: Path) -> None:
    write_seq(tmp_path, "{{ subject }}: {{ ask }}")
    templates, diags = load_templates(tmp_path)
    assert list(templates) == ["specs/templates/seq.yaml"]
    assert [d.render() for d in diags] == [
        f"specs/templates/{p}.yaml: error: no template for pattern {p}; every EDGE pattern needs one "
        "(see specs/templates/README.md)"
        for p in PATTERNS
        if p != "seq"
    ]


def test_drv_needs_every_reduction(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "specs" / "templates", tmp_path / "specs" / "templates")
    drv = tmp_path / "specs" / "templates" / "drv.yaml"
    drv.write_text(drv.read_text(encoding="utf-8").split("reductions:")[0], encoding="utf-8")
    _, diags = load_templates(tmp_path)
    assert [d.render() for d in diags] == [
        "specs/templates/drv.yaml: reductions: error: missing reductions max, min, gte, lte, eq, after, mode; "
        "a drv template needs every kind"
    ]


def project_with_templates(root: Path) -> Project:
    write_project(root)
    shutil.copytree(ROOT / "specs" / "templates", root / "specs" / "templates")
    return load_project(root)


def test_build_twice_gives_identical_template_bytes(tmp_path: Path) -> None:
    first = project_with_templates(tmp_path / "a")
    second = project_with_templates(tmp_path / "b")
    assert build(first).templates == [f"templates/{p}" for p in PATTERNS]
    build(second)
    folder = Path("generated") / "templates"
    assert file_hashes(first.root / folder) == file_hashes(second.root / folder)
    assert file_hashes(first.root / folder) == file_hashes(ROOT / folder)  # the committed golden record
    again = build(first)
    assert again.templates == [] and again.removed == []
    assert file_hashes(first.root / folder) == file_hashes(ROOT / folder)


def test_check_detects_edited_and_stale_templates(tmp_path: Path) -> None:
    project = project_with_templates(tmp_path)
    build(project)
    assert check(project).drift == []
    seq = tmp_path / "generated" / "templates" / "seq.json"
    seq.write_text(seq.read_text(encoding="utf-8").replace("알려 주세요", "말해 줘"), encoding="utf-8")
    (seq.parent / "old.json").write_text("{}\n", encoding="utf-8")
    assert check(project).drift == [
        "templates/seq: generated file was edited by hand; run `kopa-gen build`",
        "templates/old: generated but its spec is gone; run `kopa-gen build`",
    ]
    report = build(project)
    assert report.templates == ["templates/seq"] and report.removed == ["templates/old"]
    assert check(project).drift == []
