"""The data.go.kr API gateway: key, quota and rate errors are answered in front of the provider, always as XML
`OpenAPI_ServiceResponse`, whatever format was asked for."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kopa_gen.envelopes.base import Reply, add, xml_bytes
from kopa_gen.language.kopa import ResultCode

ROOT = "OpenAPI_ServiceResponse"


def render_gateway(code: ResultCode) -> Reply:
    root = ET.Element(ROOT)
    head = add(root, "cmmMsgHeader")
    add(head, "errMsg", "SERVICE ERROR")
    add(head, "returnAuthMsg", code.message)
    add(head, "returnReasonCode", code.code)
    return Reply(200, xml_bytes(root), "text/xml;charset=UTF-8")


def parse_gateway(body: bytes) -> tuple[str, str] | None:
    """(returnReasonCode, returnAuthMsg) when the body is a gateway error, else None."""
    if ROOT.encode() not in body[:200]:
        return None
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    head = root.find("cmmMsgHeader")
    if head is None:
        return None
    return (head.findtext("returnReasonCode") or "", head.findtext("returnAuthMsg") or "")
