"""The report in a real headless browser (Debian's chromium, installed best-effort by .ci/run with a Korean font):
the Korean query is in the laid-out DOM, no chart label is clipped by its SVG, Hangul renders as glyphs (not as
boxes), the task table's filters, search and sort work, a mark opens its episode in the frame (hidden until then),
and screenshots of reports of 3 and 1,800 episodes are not blank (KOPA_GEN_SCREENSHOTS=DIR keeps them). Skips with
the reason where no browser is installed."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.report import RunData, render_report
from kopa_gen.evaluate.transcript import anchor
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.reportdata import TASKS, Rendered, eighteen_hundred, sample_report

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
  const out = {svgs: 0, texts: 0, clipped: []};
  try { await measure(out); } catch (e) { out.error = String(e); finish(out); }
})();
async function measure(out) {
  await document.fonts.ready;
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
  out.count = document.getElementById('shown').textContent;
  out.box_hidden = document.getElementById('transcript-box').hidden;
  if (!window.INTERACT) return finish(out);
  // the task table's filters, search and sort, as a person uses them
  const rows = () => Array.from(document.querySelectorAll('table.tasks tbody tr'));
  const shown = () => rows().filter(r => !r.hidden).map(r => r.dataset.task);
  const set = (id, prop, value) => {
    const el = document.getElementById(id);
    el[prop] = value;
    el.dispatchEvent(new Event('input'));
  };
  out.filters_visible = !document.getElementById('filters').hidden;
  out.all = shown();
  set('failed', 'checked', true); out.failed = shown(); set('failed', 'checked', false);
  set('domain', 'value', 'district'); out.district = shown(); set('domain', 'value', '');
  set('search', 'value', 'edu-011'); out.search = shown(); set('search', 'value', '');
  set('sort', 'value', 'rate'); out.by_rate = rows().map(r => r.dataset.task);
  // a mark opens its episode in the frame, which comes into view
  const frame = document.querySelector('iframe[name=transcript]');
  const mark = document.querySelector('table.tasks a.ep');
  const loaded = new Promise(resolve => frame.addEventListener('load', resolve, {once: true}));
  mark.click();
  await loaded;
  await new Promise(resolve => setTimeout(resolve, 50));
  const anchor = decodeURIComponent(mark.getAttribute('href').split('#')[1]);
  const section = frame.contentDocument.getElementById(anchor);
  out.opened = {href: mark.getAttribute('href'), box_hidden: document.getElementById('transcript-box').hidden,
    found: section !== null, text: section ? section.textContent.slice(0, 400) : '',
    frame_top: frame.getBoundingClientRect().top, scrolled: window.scrollY, view: window.innerHeight, back: document.getElementById('back').textContent};
  finish(out);
}
function finish(out) {
  const pre = document.createElement('pre');
  pre.id = 'probe-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
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
        "--allow-file-access-from-files",  # the probe reads the transcript frame, a file of its own
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


def probed(folder: Path, html_text: str, interact: bool) -> tuple[str, dict[str, Any]]:
    """The page laid out at 1300 x 2400 with the probe run in it: the DOM and what the probe measured."""
    probe = folder / "probe.html"
    flag = "<script>window.INTERACT = true;</script>" if interact else ""
    probe.write_text(html_text.replace("</body>", flag + PROBE + "</body>"), encoding="utf-8")
    dom = chromium(
        "--window-size=1300,2400",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.as_uri(),
        profile=folder / "probe-profile",
    )
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom.stdout, re.S)
    assert found, f"the probe wrote nothing; chromium said: {dom.stderr[-2000:]}"
    return dom.stdout, json.loads(html.unescape(found.group(1)))


def screenshot(page: Path, name: str) -> tuple[Path, str]:
    """A 1300 x 2400 screenshot of a page, kept in $KOPA_GEN_SCREENSHOTS when that is set."""
    shot = page.parent / f"{name}.png"
    made = chromium(
        f"--screenshot={shot}",
        "--window-size=1300,2400",
        page.as_uri(),
        profile=page.parent / f"{name}-profile",
    )
    keep = os.environ.get("KOPA_GEN_SCREENSHOTS")
    if keep and shot.exists():
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(keep) / shot.name)
    return shot, made.stderr[-2000:]


@pytest.fixture(scope="module")
def page(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("browser")
    rendered: Rendered = sample_report(project, folder)
    dom, probe = probed(folder, rendered.html, interact=True)
    shot, log = screenshot(folder / "report.html", "report-two-runs")
    return {"rendered": rendered, "dom": dom, "probe": probe, "shot": shot, "shot_log": log}


@pytest.fixture(scope="module", params=[3, 1800], ids=lambda n: f"{n}-episodes")
def sized(
    page: dict[str, Any], request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """A report of one run of 3 episodes (one task, 3 rollouts) or of 1,800 (45 tasks x 8 seeds x 5 rollouts)."""
    episodes: int = request.param
    run = page["rendered"].runs["first-page"]
    records = (
        [r for r in run.records if r["task"] == TASKS[0]] if episodes == 3 else eighteen_hundred(run.records)
    )
    folder = tmp_path_factory.mktemp(f"browser-{episodes}")
    manifest = run.manifest
    if manifest is not None and episodes == 1800:  # the plan of the records made: 8 seeds x 5 rollouts
        manifest = manifest.model_copy(update={"seeds": list(range(8)), "rollouts": 5})
    report = render_report({"first-page": RunData(records, manifest)})
    report.write(folder)
    _, probe = probed(folder, report.html, interact=False)
    shot, log = screenshot(folder / "report.html", f"report-{episodes}")
    transcript, _ = screenshot(folder / next(iter(report.pages)), f"transcript-{episodes}")
    return {
        "episodes": episodes,
        "records": records,
        "report": report,
        "probe": probe,
        "shot": shot,
        "shot_log": log,
        "transcript": transcript,
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


def test_the_task_table_filters_searches_and_sorts(page: dict[str, Any]) -> None:
    probe = page["probe"]
    runs = page["rendered"].runs
    records = [r for run in runs.values() for r in run.records]
    tasks = sorted({r["task"] for r in records})
    assert probe["filters_visible"] and sorted(probe["all"]) == sorted(tasks)
    assert sorted(probe["failed"]) == sorted({r["task"] for r in records if not r["reward"]})
    assert sorted(probe["district"]) == sorted({r["task"] for r in records if r["domain"] == "district"})
    assert probe["search"] == ["edu-011"]
    rate = {
        t: min(
            sum(r["reward"] for r in run.records if r["task"] == t) / sum(r["task"] == t for r in run.records)
            for run in runs.values()
        )
        for t in tasks
    }
    assert probe["by_rate"] == sorted(tasks, key=lambda t: (rate[t], t))
    assert probe["count"] == f"{len(tasks)} of {len(tasks)} tasks"


def test_a_mark_opens_its_episode_in_the_frame(page: dict[str, Any]) -> None:
    probe = page["probe"]
    opened = probe["opened"]
    assert probe["box_hidden"] and not opened["box_hidden"], "the frame shows once an episode is chosen"
    record = next(
        r
        for i, run in enumerate(page["rendered"].runs.values())
        for r in run.records
        if opened["href"].endswith("#" + anchor(i, r["key"]))
    )
    assert opened["found"] and record["task"] in opened["text"], opened
    # brought into view: the page scrolled to it and half the window at least shows the episode
    assert opened["scrolled"] > 0 and 0 <= opened["frame_top"] < opened["view"] / 2, opened
    assert opened["back"] == f"↑ back to {record['task']} in the table"


def not_blank(shot: Path, log: str) -> None:
    assert shot.exists(), f"no screenshot; chromium said: {log}"
    width, height, rows = png_rows(shot.read_bytes())
    assert (width, height) == (1300, 2400)
    # a uniform page filters to a handful of distinct scanlines; text, tables and charts to many
    assert len(set(rows)) > 200, len(set(rows))


def test_screenshot_is_not_blank(page: dict[str, Any]) -> None:
    not_blank(page["shot"], page["shot_log"])


def test_reports_of_3_and_1800_episodes_lay_out(sized: dict[str, Any]) -> None:
    probe, records = sized["probe"], sized["records"]
    tasks = {r["task"] for r in records}
    assert len(records) == sized["episodes"] and probe["count"] == f"{len(tasks)} of {len(tasks)} tasks"
    assert probe["clipped"] == [], probe["clipped"]
    assert len(sized["report"].html.encode()) < 5_000_000
    not_blank(sized["shot"], sized["shot_log"])
    not_blank(sized["transcript"], "")
