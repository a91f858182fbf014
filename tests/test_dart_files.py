"""OpenDART's per-request downloads (document.xml, fnlttXbrl.xml: a ZIP of one member per world row) and grouped
answers (DS006 증권신고서: `group: [{title, list}]`), over real HTTP loopback and through the client: the ZIP
members, the error envelope instead of a ZIP, the XBRL facts equal to fnlttSinglAcnt, JSON/XML parity of the groups,
openapi-core on every JSON answer, the tool's cut note, and broken declarations of the new keys."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.client.bulk import member_rows, plain
from kopa_gen.client.errors import ToolArgumentError
from kopa_gen.client.validation import SpecValidator
from kopa_gen.compose import sandbox_client
from kopa_gen.envelopes.base import JSON
from kopa_gen.language.platform import Operation
from kopa_gen.language.source import resolve
from kopa_gen.project import Project
from kopa_gen.sandbox.emulator import Sandbox
from tests.conftest import repository_project
from tests.test_broken_specs import problems, spec_with
from tests.test_loopback import served

__all__ = ["served"]  # the loopback sandbox fixture, shared with tests/test_loopback.py

DART = repository_project().platform("dart")
EXAMPLES = DART.kopa.examples
GROUPED = [op for op in DART.operations if op.kopa.groups is not None]
PER_ROW = [op for op in DART.operations if op.kopa.file is not None and op.kopa.file.per_row]
Served = tuple[str, dict[str, str]]


def get(url: str, **params: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(params), timeout=60) as response:
        return response.headers["Content-Type"], response.read()


def members(body: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        return {info.filename: zf.read(info).decode("utf-8") for info in zf.infolist()}


def major_accounts(served: Served, rcept_no: str) -> list[JSON]:
    """The fnlttSinglAcnt rows of the report `rcept_no` (found through list.json's company and year)."""
    base, keys = served
    _, listed = get(
        f"{base}/dart/api/list.json", crtfc_key=keys["dart"], corp_code=str(EXAMPLES["corp_code"][0]),
        bgn_de=rcept_no[:8], end_de=rcept_no[:8],
    )  # fmt: skip
    (report,) = [r for r in json.loads(listed)["list"] if r["rcept_no"] == rcept_no]
    year = str(int(rcept_no[:4]) - 1) if "사업보고서" in report["report_nm"] else rcept_no[:4]
    code = "11011" if "사업보고서" in report["report_nm"] else "11012"
    _, body = get(
        f"{base}/dart/api/fnlttSinglAcnt.json", crtfc_key=keys["dart"], corp_code=report["corp_code"],
        bsns_year=year, reprt_code=code,
    )  # fmt: skip
    rows: list[JSON] = json.loads(body)["list"]
    assert rows and {r["rcept_no"] for r in rows} == {rcept_no}
    return rows


def test_document_zip_holds_the_report_and_states_its_amounts(served: Served) -> None:
    base, keys = served
    rcept_no = str(EXAMPLES["rcept_no"][0])
    kind, body = get(f"{base}/dart/api/document.xml", crtfc_key=keys["dart"], rcept_no=rcept_no)
    assert kind == "application/zip" and body[:2] == b"PK"
    files = members(body)
    main = files[f"{rcept_no}.xml"]
    assert all(name == f"{rcept_no}.xml" or name.startswith(f"{rcept_no}_") for name in files)
    assert len(files) >= 2, "an annual report comes with its auditor's report"
    ET.fromstring(main.encode())  # well-formed document markup
    text = plain(main)
    for row in major_accounts(served, rcept_no):
        assert f"{row['account_nm']} {row['thstrm_amount']}" in text, row["account_nm"]


def test_document_errors_are_the_xml_envelope_not_a_zip(served: Served) -> None:
    base, keys = served
    rcept_no = str(EXAMPLES["rcept_no"][0])
    missing = rcept_no[:8] + "999999"
    cases = [
        ({"crtfc_key": keys["dart"], "rcept_no": missing}, "014"),
        ({"crtfc_key": "0" * 40, "rcept_no": rcept_no}, DART.kopa.answers.bad_key),
        ({"crtfc_key": keys["dart"]}, DART.kopa.answers.missing_param),
    ]
    for params, code in cases:
        kind, body = get(f"{base}/dart/api/document.xml", **params)
        root = ET.fromstring(body)
        assert kind.startswith("application/xml") and root.tag == "result", body[:80]
        assert (root.findtext("status"), root.findtext("message")) == (code, DART.code(code).message)


def test_xbrl_instance_facts_equal_the_major_accounts(served: Served) -> None:
    base, keys = served
    rcept_no = str(EXAMPLES["rcept_no"][1])
    rows = major_accounts(served, rcept_no)
    code = str(rows[0]["reprt_code"])
    _, body = get(
        f"{base}/dart/api/fnlttXbrl.xml", crtfc_key=keys["dart"], rcept_no=rcept_no, reprt_code=code
    )
    files = members(body)
    (instance,) = [text for name, text in files.items() if name.endswith(".xbrl")]
    root = ET.fromstring(instance.encode())
    labels = {
        el.get("{http://www.w3.org/1999/xlink}label", "").removeprefix("label_"): el.text
        for name, text in files.items()
        if name.endswith("_lab-ko.xml")
        for el in ET.fromstring(text.encode()).iter("{http://www.xbrl.org/2003/linkbase}label")
    }
    facts: dict[tuple[str, str], str] = {}
    for el in root:
        if el.get("contextRef"):
            name = el.tag.split("}")[1]
            prefix = "dart" if "dart.fss.or.kr" in el.tag else "ifrs-full"
            member = "CFS" if el.get("contextRef", "").endswith("_ConsolidatedMember") else "OFS"
            facts[(str(labels[f"{prefix}_{name}"]), member)] = el.text or ""
    expected = {(r["account_nm"], r["fs_div"]): str(r["thstrm_amount"]).replace(",", "") for r in rows}
    assert facts == expected
    # a report code that is not the report's own: no such file
    other = next(c for c in ("11011", "11012", "11013", "11014") if c != code)
    _, error = get(
        f"{base}/dart/api/fnlttXbrl.xml", crtfc_key=keys["dart"], rcept_no=rcept_no, reprt_code=other
    )
    assert ET.fromstring(error).findtext("status") == "014"


@pytest.mark.parametrize("op", GROUPED, ids=[op.tool for op in GROUPED])
def test_groups_in_json_and_xml_agree_and_follow_the_spec(served: Served, op: Operation) -> None:
    base, keys = served
    assert op.kopa.groups is not None
    found: dict[str, Any] = {}
    for corp_code in EXAMPLES["corp_code"]:
        params = {
            "crtfc_key": keys["dart"],
            "corp_code": str(corp_code),
            "bgn_de": "20230101",
            "end_de": "20261128",
        }
        _, body = get(f"{base}/dart/api{op.path}", **params)
        found = json.loads(body)
        if found["status"] == "000":
            break
    assert found["status"] == "000", f"no example company has a {op.tool} registration"
    titles = list(op.kopa.groups.schemas)
    assert [g["title"] for g in found["group"]] == titles, "every declared group, in order"
    for group in found["group"]:
        props = resolve(DART.doc, op.kopa.groups.schemas[group["title"]])["properties"]
        for item in group["list"]:
            assert list(item) == list(props), group["title"]
    _, xml = get(f"{base}/dart/api{op.path.replace('.json', '.xml')}", **params)
    root = ET.fromstring(xml)
    from_xml = [
        {
            "title": g.findtext("title"),
            "list": [{c.tag: c.text or "" for c in item} for item in g.findall("list")],
        }
        for g in root.findall("group")
    ]
    assert root.findtext("status") == "000" and from_xml == found["group"]


@pytest.mark.anyio
async def test_grouped_and_file_answers_pass_openapi_core(project: Project, sandbox: Sandbox) -> None:
    validator = SpecValidator(project.platform("dart"))
    async with sandbox_client(sandbox, "dart", wire="json") as http:
        http.on_exchange = validator
        args = {"corp_code": str(EXAMPLES["corp_code"][4]), "bgn_de": "20230101", "end_de": "20261128"}
        grouped = await http.call("estkRs", args)
        assert grouped.rows and {row["title"] for row in grouped.rows} <= set(GROUPED[0].kopa.groups.schemas)  # type: ignore[union-attr]
        document = await http.call("document", {"rcept_no": str(EXAMPLES["rcept_no"][0])})
        assert document.rows[0]["file_name"] == f"{EXAMPLES['rcept_no'][0]}.xml"
        missing = await http.call("document", {"rcept_no": "20000101000000"})
        assert (missing.code, missing.rows) == ("014", [])
    assert validator.responses_checked >= 2


def a_zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text.encode("utf-8"))
    return buf.getvalue()


def small(op: Operation, chars: int) -> Operation:
    """`op` with a per-call text window of `chars` characters."""
    assert op.kopa.file is not None
    kopa = op.kopa.model_copy(update={"file": op.kopa.file.model_copy(update={"text_chars": chars})})
    return dataclasses.replace(op, kopa=kopa)


@pytest.mark.parametrize("op", PER_ROW, ids=[op.tool for op in PER_ROW])
def test_the_tool_cuts_a_member_with_a_note_and_reads_on(op: Operation) -> None:
    assert op.kopa.file is not None and op.kopa.file.name_column and op.kopa.file.content_column
    name_col, content_col = op.kopa.file.name_column, op.kopa.file.content_column
    body = "<DOCUMENT><P>" + "가나다라마바사 " * 60 + "</P><P>끝</P></DOCUMENT>"
    body_zip = a_zip({"main.xml": body, "main_00760.xml": "<P>첨부</P>"})
    narrow = small(op, 100)
    whole = plain(body) if op.kopa.file.text == "plain" else body
    read, offset = "", 0
    while True:
        rows = member_rows(narrow, body_zip, {"offset": offset})
        assert [r[name_col] for r in rows] == ["main.xml", "main_00760.xml"]
        assert (
            rows[1][content_col]
            == f"[{len(plain('<P>첨부</P>') if op.kopa.file.text == 'plain' else '<P>첨부</P>'):,}자. 읽으려면 member=main_00760.xml]"
        )
        shown, _, note = str(rows[0][content_col]).rpartition("\n[")
        assert note.startswith(f"전체 {len(whole):,}자 중 {offset:,}–"), note
        read += shown
        if "이어 읽으려면" not in note:
            break
        offset = int(note.rsplit("offset=", 1)[1].rstrip(".]"))
    assert read == whole, "the windows put together are the whole member: nothing is dropped"
    with pytest.raises(ToolArgumentError, match=re.escape("member: 'x.xml' is not in this file")):
        member_rows(narrow, body_zip, {"member": "x.xml"})


# ---------------------------------------------------------------------------- broken declarations of the new keys
def with_kopa(**change: Any) -> dict[str, Any]:
    return spec_with(lambda spec: spec["paths"]["/fruits"]["get"]["x-kopa"].update(change))


def test_a_group_schema_that_is_not_a_components_pointer(tmp_path: Path) -> None:
    (found,) = problems(tmp_path, with_kopa(groups={"by": "name", "schemas": {"과일": "Fruit"}}))
    assert "paths./fruits.get.x-kopa.groups.schemas: error:" in found
    assert "group '과일': 'Fruit' is not a '#/components/schemas/<Name>' pointer" in found
    assert "\n" not in found


def test_a_group_schema_that_does_not_exist_and_a_by_that_is_no_property(tmp_path: Path) -> None:
    found = problems(
        tmp_path, with_kopa(groups={"by": "kind", "schemas": {"과일": "#/components/schemas/Nope"}})
    )
    assert any(
        "paths./fruits.get.x-kopa.groups.by: error: 'kind' is not a property of the row schema" in f
        for f in found
    )
    assert any(
        "paths./fruits.get.x-kopa.groups.schemas.과일: error: '#/components/schemas/Nope' is not an object schema"
        in f
        for f in found
    )


def test_a_file_with_both_layouts(tmp_path: Path) -> None:
    spec = with_kopa(shape="file", file={"member": "A.xml", "name_column": "code", "content_column": "name"})
    (found,) = problems(tmp_path, spec)
    assert "paths./fruits.get.x-kopa.file: error:" in found
    assert "give exactly one of `member` (one file of every row) or `name_column` (a file per row)" in found


def test_a_per_row_file_naming_a_column_the_row_lacks_and_an_unknown_code(tmp_path: Path) -> None:
    spec = with_kopa(
        shape="file", file={"name_column": "file_name", "content_column": "name", "missing": "999"}
    )
    found = problems(tmp_path, spec)
    assert any(
        "x-kopa.file.name_column: error: 'file_name' is not a property of the row schema" in f for f in found
    )
    assert any("x-kopa.file.missing: error: code '999' is not listed in x-kopa.codes" in f for f in found)
