"""`kopa-gen new platform ID --family F`: a platform that builds, serves and passes the platform tests at once.

It writes three things, all data: `specs/platforms/<ID>/openapi.yaml` (the family's envelope, key, format and
paging from the family module's `scaffold`, one list operation with a row schema, a filter and sample arguments),
`specs/world/<ID>.yaml` (a declared table of 300 rows and the view the operation binds to) and one line in
`specs/world/world.yaml`. The author then replaces the sample operation with the real API's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kopa_gen.envelopes import family, family_names
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.domains import load_domains
from kopa_gen.language.yamlout import dump_yaml

PLATFORM_ID = re.compile(r"^[a-z][a-z0-9]{1,23}$")


class ScaffoldError(UserError):
    """What stops the scaffold, said in one line with what to do."""


def new_platform(root: Path, pid: str, family_name: str, domain: str | None = None) -> list[Path]:
    """Write the platform's spec and world; return the files written (world.yaml is edited in place)."""
    if not PLATFORM_ID.match(pid):
        raise ScaffoldError(
            f"platform id {pid!r}: write 2-24 lower-case letters or digits, starting with a letter"
        )
    if family_name not in family_names():
        raise ScaffoldError(f"unknown envelope family {family_name!r}; known: {', '.join(family_names())}")
    spec_path = root / "specs" / "platforms" / pid / "openapi.yaml"
    world_path = root / "specs" / "world" / f"{pid}.yaml"
    world_root = root / "specs" / "world" / "world.yaml"
    for path in (spec_path, world_path):
        if path.exists():
            raise ScaffoldError(f"{path.relative_to(root)} exists; choose another id or remove it")
    if not world_root.exists():
        raise ScaffoldError(f"{world_root.relative_to(root)} missing: run this in a kopa-gen project folder")
    domains, _ = load_domains(root)
    if domain is None:
        if not domains:
            raise ScaffoldError("no domains in specs/domains.yaml; declare one, or pass --domain")
        domain = next(iter(domains))
    elif domains and domain not in domains:
        raise ScaffoldError(
            f"unknown domain {domain!r}; declared in specs/domains.yaml: {', '.join(domains)}"
        )
    row = "Item"
    text = (
        family(family_name)
        .scaffold.replace("__ID__", pid)
        .replace("__ROW__", row)
        .replace("__ENV__", f"{pid.upper()}_API_KEY")
    )
    template: dict[str, Any] = yaml.safe_load(text)
    kopa = template["x-kopa"]
    kopa = {"platform": pid, "domain": domain, **kopa, "envelope": family_name}
    kopa["world"] = [f"{pid}.yaml"]
    kopa["examples"] = {"item_nm": ["관측"]}
    tool = f"{pid}_list_items"
    spec = {
        "openapi": "3.1.0",
        "info": {
            "title": f"{pid} (새 플랫폼)",
            "version": "1",
            "description": "kopa-gen new platform 이 만든 시작점",
        },
        "servers": [{"url": template["server"]}],
        "security": [{kopa["auth"]["scheme"]: []}],
        "paths": {
            template["path"]: {
                "get": {
                    "operationId": f"get{row}List",
                    "summary": "항목 목록 조회",
                    "description": "항목명 일부로 찾은 항목 목록 (실제 API의 연산으로 바꾸십시오)",
                    "parameters": [
                        {
                            "name": "item_nm",
                            "in": "query",
                            "description": "항목명 일부",
                            "schema": {"type": "string"},
                        },
                        *template["params"],
                    ],
                    "responses": {
                        "200": {
                            "description": "항목 목록 또는 오류",
                            "content": {"application/json": {"schema": template["response"]}},
                        }
                    },
                    "x-kopa": {
                        "tool": tool,
                        "effect": "read",
                        "shape": "list",
                        "row": f"#/components/schemas/{row}",
                        "source": {
                            "table": f"{pid}_items_served",
                            "filters": [{"param": "item_nm", "column": "item_nm", "match": "contains"}],
                            "order": [{"column": "item_id"}],
                        },
                    },
                }
            }
        },
        "components": {
            "securitySchemes": {
                kopa["auth"]["scheme"]: {
                    "type": "apiKey",
                    "in": "query",
                    "name": template["key"]["name"],
                    "description": template["key"]["description"],
                }
            },
            "schemas": {
                row: {
                    "type": "object",
                    "properties": {
                        "item_id": {"type": "string", "description": "항목 코드 (8자리)"},
                        "item_nm": {"type": "string", "description": "항목명"},
                        "region_cd": {"type": "string", "description": "법정동코드 10자리"},
                        "addr": {"type": "string", "description": "도로명주소"},
                        "mgr_nm": {"type": "string", "description": "담당자"},
                        "reg_de": {"type": "string", "description": "등록일 (YYYYMMDD)"},
                        "cnt": {"type": "integer", "description": "수량"},
                    },
                }
            },
        },
        "x-kopa": kopa,
    }
    world = {
        "tables": [
            {
                "name": f"{pid}_items",
                "description": "Sample rows of the scaffold (replace with the platform's own tables).",
                "rows": 300,
                "columns": [
                    {"name": "item_id", "gen": {"code": "{n:08d}"}},
                    {"name": "item_nm", "gen": {"code": "관측 항목 {n}"}},
                    {"name": "region_cd", "gen": {"ref": "regions.region_cd", "where": "abolished = 0"}},
                    {"name": "addr", "gen": {"address": "region_cd"}},
                    {"name": "mgr_nm", "gen": {"person": "full"}},
                    {"name": "reg_de", "gen": {"date": ["2015-01-01", "today-1"]}},
                    {"name": "cnt", "type": "integer", "gen": {"lognormal": [40, 0.8]}},
                ],
                "indexes": [["item_id"]],
            }
        ],
        "views": [
            {
                "name": f"{pid}_items_served",
                "description": f"{tool} rows as the platform serves them.",
                "sql": f"SELECT item_id, item_nm, region_cd, addr, mgr_nm, reg_de, cnt FROM {pid}_items",
            }
        ],
    }
    spec_path.parent.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(
        f"# Scaffolded by `kopa-gen new platform {pid} --family {family_name}`.\n"
        + dump_yaml(spec, width=120),
        "utf-8",
    )
    world_path.write_text(
        "# yaml-language-server: $schema=../../generated/schemas/world.schema.json\n"
        f"# The world of {pid}: a declared table (no Python) and the view its operation binds to.\n"
        + dump_yaml(world, width=120),
        "utf-8",
    )
    _add_world_file(world_root, f"{pid}.yaml")
    return [spec_path, world_path, world_root]


def _add_world_file(world_root: Path, name: str) -> None:
    """Append `name` to the `files:` list of world.yaml, keeping its comments and layout."""
    lines = world_root.read_text("utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("files:")), None)
    if start is None:
        raise ScaffoldError(f"{world_root}: no `files:` list to add {name} to")
    if "[" in lines[start]:  # flow style: files: [a.yaml, b.yaml]
        head, _, tail = lines[start].rpartition("]")
        lines[start] = f"{head}, {name}]{tail}"
    else:
        end = start + 1
        while end < len(lines) and re.match(r"^\s*(- |#|$)", lines[end]):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        items = [line for line in lines[start + 1 : end] if line.lstrip().startswith("- ")]
        indent = items[-1][: items[-1].index("-")] if items else "  "
        lines.insert(end, f"{indent}- {name}\n")
    world_root.write_text("".join(lines), "utf-8")
