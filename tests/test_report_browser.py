"""The report in a real headless browser (Debian's chromium, installed best-effort by .ci/run with a Korean font):
the Korean query is in the laid-out DOM, no chart label is clipped by its SVG, Hangul renders as glyphs (not as
boxes), and a screenshot of the page is not blank. Skips with the reason where no browser is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.reportdata import Rendered, sample_report

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((path for name in BROWSERS if (path := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason=f"no headless browser on PATH ({', '.join(BROWSERS)}); .ci/run installs Debian's chromium and "
    "fonts-noto-cjk where apt-get and root (or sudo) are available",
)

# Runs in the page after layout and font loading; writes what it measured into <pre id="probe-result">.
PROBE = """<script>
(async () => {
  await document.fonts.ready;
  const out = {svgs: 0, texts: 0, clipped: []};
  for (const svg of document.querySelectorAll('svg')) {
    out.svgs++;
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      out.texts++;
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 ||
          r.bottom > box.bottom + 0.5) {
        out.clipped.push({text: t.textContent, left: r.left - box.left, right: r.right - box.left,
                          top: r.top - box.top, bottom: r.bottom - box.top, width: box.width, height: box.height});
      }
    }
  }
  // Hangul renders when two different syllables draw different pixels (a missing glyph is the same box for all).
  const family = getComputedStyle(document.body).fontFamily;
  const draw = (ch) => {
    const c = document.createElement('canvas');
    c.width = 40; c.height = 40;
    const g = c.getContext('2d');
    g.font = '28px ' + family;
    g.fillText(ch, 4, 32);
    return Array.from(g.getImageData(0, 0, 40, 40).data).join(',');
  };
  out.family = family;
  out.hangul_glyphs = draw('가') !== draw('힣');
  const pre = document.createElement('pre');
  pre.id = 'probe-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",  # root in containers; the page is our own file
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the filtered scanlines of a PNG (8-bit RGB or RGBA), read with the standard library."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + width * channels
    assert len(raw) == height * stride, "truncated image data"
    return width, height, [raw[i * stride : (i + 1) * stride] for i in range(height)]


@pytest.fixture(scope="module")
def page(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("browser")
    rendered: Rendered = sample_report(project, folder)
    probe = folder / "probe.html"
    probe.write_text(rendered.html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(
        "--window-size=1300,2400",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.as_uri(),
        profile=folder / "p1",
    )
    shot = folder / "report.png"
    made = chromium(
        f"--screenshot={shot}",
        "--window-size=1300,2400",
        (folder / "report.html").as_uri(),
        profile=folder / "p2",
    )
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom.stdout, re.S)
    assert found, f"the probe wrote nothing; chromium said: {dom.stderr[-2000:]}"
    return {
        "rendered": rendered,
        "dom": dom.stdout,
        "probe": json.loads(html.unescape(found.group(1))),
        "shot": shot,
        "shot_log": made.stderr[-2000:],
    }


def test_korean_query_is_in_the_laid_out_dom(project: Project, page: dict[str, Any]) -> None:
    queries = [r["query"] for run in page["rendered"].runs.values() for r in run.records]
    assert queries and all(q in page["dom"] for q in queries)
    assert "Noto Sans CJK KR" in page["probe"]["family"]


def test_no_chart_label_is_clipped(page: dict[str, Any]) -> None:
    probe = page["probe"]
    assert probe["svgs"] >= 5 and probe["texts"] > 20
    assert probe["clipped"] == [], probe["clipped"]


def test_hangul_renders_as_glyphs(page: dict[str, Any]) -> None:
    fonts = (
        shutil.which("fc-list")
        and subprocess.run(
            ["fc-list", ":lang=ko", "family"], capture_output=True, text=True, check=False
        ).stdout.strip()
    )
    if not fonts:
        pytest.skip("no Korean font installed (fonts-noto-cjk); Hangul would render as boxes")
    assert page["probe"]["hangul_glyphs"], f"Hangul drew as missing glyphs although fc-list finds {fonts!r}"


def test_screenshot_is_not_blank(page: dict[str, Any]) -> None:
    shot: Path = page["shot"]
    assert shot.exists(), f"no screenshot; chromium said: {page['shot_log']}"
    width, height, rows = png_rows(shot.read_bytes())
    assert (width, height) == (1300, 2400)
    # a uniform page filters to a handful of distinct scanlines; text, tables and charts to many
    assert len(set(rows)) > 200, len(set(rows))
