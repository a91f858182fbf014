"""A tiny but complete project (world + one platform) written into a temporary folder, for tests that
generate, import and call code, and for broken-spec tests that assert exact error text."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

WORLD_ROOT = {"seed": 7, "today": "2026-11-29", "files": ["toy.yaml"]}
WORLD_FILE: dict[str, Any] = {
    "tables": [
        {
            "name": "fruit",
            "description": "Fruit prices.",
            "generator": "static",
            "columns": [{"name": "code"}, {"name": "name"}, {"name": "price", "type": "integer"}],
            "anchors": [
                {"code": "F01", "name": "사과", "price": 1200},
                {"code": "F02", "name": "배", "price": 2500},
                {"code": "F03", "name": "청사과", "price": 1500},
            ],
        }
    ],
    "views": [
        {"name": "toy_fruit", "description": "As served.", "sql": "SELECT code, name, price FROM fruit"}
    ],
}

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "과일 가격", "version": "1"},
    "servers": [{"url": "https://apis.example.kr/toy"}],
    "security": [{"key": []}],
    "paths": {
        "/fruits": {
            "get": {
                "operationId": "getFruits",
                "summary": "과일 목록",
                "parameters": [
                    {"name": "name", "in": "query", "description": "이름 일부", "schema": {"type": "string"}},
                    {"name": "pageNo", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                    {
                        "name": "numOfRows",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 2},
                    },
                    {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["xml", "json"]}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Fruit"}}},
                    }
                },
                "x-kopa": {
                    "tool": "toy_list_fruits",
                    "effect": "read",
                    "shape": "list",
                    "row": "#/components/schemas/Fruit",
                    "source": {
                        "table": "toy_fruit",
                        "filters": [{"param": "name", "column": "name", "match": "contains"}],
                        "order": [{"column": "code"}],
                    },
                },
            }
        }
    },
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "serviceKey"}},
        "schemas": {
            "Fruit": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "코드"},
                    "name": {"type": "string", "description": "이름"},
                    "price": {"type": "integer", "description": "가격"},
                },
            }
        },
    },
    "x-kopa": {
        "platform": "toy",
        "domain": "finance",
        "envelope": "datagokr",
        "gateway": "datagokr",
        "auth": {"scheme": "key", "env": "TOY_KEY", "key_pattern": "^[0-9a-f]{32}$"},
        "format": {"param": "type", "json": "json", "xml": "xml"},
        "paging": {"page": "pageNo", "size": "numOfRows", "default_size": 2, "max_size": 2},
        "codes": [
            {"code": "00", "message": "NORMAL SERVICE.", "category": "ok"},
            {"code": "10", "message": "INVALID_REQUEST_PARAMETER_ERROR", "category": "bad_param"},
            {"code": "22", "message": "LIMITED", "category": "quota", "gateway": True},
            {"code": "23", "message": "RATE", "category": "rate", "gateway": True},
            {
                "code": "30",
                "message": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
                "category": "auth",
                "gateway": True,
            },
            {"code": "99", "message": "UNKNOWN_ERROR", "category": "server"},
        ],
        "answers": {
            "ok": "00",
            "no_data": "00",
            "bad_key": "30",
            "missing_param": "10",
            "invalid_param": "10",
            "page_size": "10",
            "quota": "22",
            "rate": "23",
            "server": "99",
        },
        "limits": {"daily": 100, "per_second": 5},
    },
}


def write_project(
    root: Path, spec: dict[str, Any] | None = None, world: dict[str, Any] | None = None
) -> Path:
    (root / "specs" / "world").mkdir(parents=True, exist_ok=True)
    (root / "specs" / "platforms" / "toy").mkdir(parents=True, exist_ok=True)
    (root / "specs" / "world" / "world.yaml").write_text(yaml.safe_dump(WORLD_ROOT), encoding="utf-8")
    (root / "specs" / "domains.yaml").write_text(
        yaml.safe_dump({"domains": [{"id": "finance", "name": "금융"}]}, allow_unicode=True), encoding="utf-8"
    )
    (root / "specs" / "world" / "toy.yaml").write_text(
        yaml.safe_dump(world or WORLD_FILE, allow_unicode=True), encoding="utf-8"
    )
    text = yaml.safe_dump(spec or SPEC, allow_unicode=True, sort_keys=False)
    (root / "specs" / "platforms" / "toy" / "openapi.yaml").write_text(text, encoding="utf-8")
    return root


def spec_copy() -> dict[str, Any]:
    return copy.deepcopy(SPEC)
