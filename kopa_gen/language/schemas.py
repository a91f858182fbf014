"""JSON Schemas of the spec language and of the records that cross packages, exported to generated/schemas/ for editors
(`# yaml-language-server: $schema=...`) and reviewers."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from kopa_gen.language.catalog import Catalog
from kopa_gen.language.kopa import Domains, OperationKopa, PlatformKopa
from kopa_gen.language.meaning import Kinds, Meaning
from kopa_gen.language.records import EpisodeRecord, Fixture, RunManifest
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.synthesis import GraphDoc, Provenance
from kopa_gen.language.task import Task
from kopa_gen.language.world import WorldFile, WorldRoot

SCHEMAS: dict[str, type[BaseModel]] = {
    "platform-x-kopa.schema.json": PlatformKopa,
    "operation-x-kopa.schema.json": OperationKopa,
    "catalog.schema.json": Catalog,
    "world.schema.json": WorldFile,
    "world-root.schema.json": WorldRoot,
    "task.schema.json": Task,
    "domains.schema.json": Domains,
    "fixture.schema.json": Fixture,
    "episode.schema.json": EpisodeRecord,
    "meaning.schema.json": Meaning,
    "kinds.schema.json": Kinds,
    "graph.schema.json": GraphDoc,
    "provenance.schema.json": Provenance,
    "run.schema.json": RunManifest,
    "endpoint.schema.json": EndpointSettings,
}


def render(model: type[BaseModel]) -> str:
    schema = model.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, ensure_ascii=False, indent=1) + "\n"


def export_schemas(root: Path, write: bool) -> list[str]:
    """Write (or, with write=False, only list) the schema files that differ from the models, and remove (or
    list) a schema file no model has any more."""
    folder = root / "generated" / "schemas"
    stale: list[str] = []
    for orphan in sorted(folder.glob("*.schema.json")) if folder.is_dir() else []:
        if orphan.name not in SCHEMAS:
            stale.append(str(orphan.relative_to(root)))
            if write:
                orphan.unlink()
    for name, model in SCHEMAS.items():
        path = folder / name
        text = render(model)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(path.relative_to(root)))
        if write:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return stale
