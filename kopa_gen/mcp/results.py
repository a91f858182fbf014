"""Base shapes of every tool's output. Always an object that keeps the paging facts next to the rows, so that a
model can see there is more than one page and must ask for it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ToolResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="플랫폼 결과 코드 (예: 000, INFO-000, 00)")
    message: str = Field(description="플랫폼 결과 메시지")


class ListResult(ToolResult):
    total_count: int = Field(description="조건에 맞는 전체 건수 (모든 페이지 합계)")
    page: int = Field(description="이번 응답의 페이지 번호 (1부터)")
    page_size: int = Field(description="페이지당 건수")


class RecordResult(ToolResult):
    pass
