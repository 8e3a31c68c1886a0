"""The two HTML reports end to end: ``gradwarden debug --report`` (what the run really did: a
confirmed silent ``.data`` write, a version-counter error only the run saw, a static finding
whose line never ran, the run's summary) and ``gradwarden check --output-format html``, read back
by parsing their SVG, then rendered by a real browser (headless Chromium, light and dark): the
screenshots are kept in ``tests/artifacts/timeline/`` to be looked at.
"""
from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from picture_checks import events, self_contained_problems, svgs, versions_in_order

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "timeline"
CHROMIUM = "/usr/bin/chromium"

# A silent .data write the run confirms, a version-counter error it alone sees (the static
# engine cannot follow `eval`), and a hazard in a function that never runs.
TARGET = textwrap.dedent("""\
    import torch


    def never_called():
        a = torch.randn(3, requires_grad=True)
        a += 1


    def opaque(t):
        return eval("torch." + "exp")(t)


    w = torch.randn(3, requires_grad=True)
    s = torch.sigmoid(w)
    s.data.mul_(0.5)
    s.sum().backward()

    x = torch.randn(3, requires_grad=True)
    y = opaque(x)
    y.mul_(2)
    y.sum().backward()
""")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Dict[str, Path]:
    """Both reports, written once: the debug run's (one run of TARGET) and check's (examples/)."""
    work = tmp_path_factory.mktemp("reports")
    (work / "train.py").write_text(TARGET)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    debug = subprocess.run([sys.executable, "-m", "gradwarden", "debug", "--device", "cpu", "--timeout", "300",
                            "--report", "out/debug.html", "train.py"], cwd=work, capture_output=True, text=True,
                           timeout=600, env=env, stdin=subprocess.DEVNULL)
    assert debug.returncode == 1, debug.stderr[-3000:]  # the script fails (its own exit status, 1)
    assert "report written to out/debug.html" in debug.stderr
    check = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "html",
                            "-o", str(work / "check.html"), "examples/"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, env=env)
    assert check.returncode == 1, check.stderr[-3000:]
    return {"debug": work / "out" / "debug.html", "check": work / "check.html", "work": work}


def test_debug_report_draws_what_the_run_saw(reports):
    html = reports["debug"].read_text(encoding="utf-8")
    assert self_contained_problems(html) == []
    pictures = {svg.get("data-code"): svg for svg in svgs(html)}
    assert {code: svg.get("data-status") for code, svg in pictures.items()} == {
        "GW601": "confirmed", "GW201": "runtime-only", "GW101": "not reached"}
    # what only the run saw: saved at version 0, Tensor.mul_ 0 -> 1, backward expects 0, finds 1
    only = events(pictures["GW201"])
    assert [(e["kind"], e["line"]) for e in only] == [("save", "10"), ("write", "20"), ("backward", "21")]
    assert versions_in_order(only) == [0, 0, 1, 0, 1]
    assert all(e["seen"] == "true" for e in only) and only[-1]["outcome"] == "raises"
    # the confirmed silent write: the run saw the save, the write (no version bump) and the backward
    confirmed = events(pictures["GW601"])
    assert [e["kind"] for e in confirmed] == ["save", "data_write", "backward"]
    assert [e["seen"] for e in confirmed] == ["true", "true", "true"]
    assert confirmed[-1]["expects"] == confirmed[-1]["finds"] == "0" and confirmed[-1]["outcome"] == "silent"
    # the static finding the run never reached keeps its static picture, unseen
    assert [e["kind"] for e in events(pictures["GW101"])] == ["created", "write"]
    # the run's summary
    assert "3 findings: 1 confirmed, 1 runtime-only, 0 not reproduced, 1 not reached." in html
    assert "2 backward call(s)" in html and "on cpu" in html and "RuntimeError" in html
    # what really happened comes first, the unreached last
    assert [svg.get("data-status") for svg in svgs(html)][-1] == "not reached"


def test_debug_report_that_cannot_be_written(tmp_path):
    from gradwarden.runtime.cli import write_html_report
    from gradwarden.runtime.session import DebugResult, Target

    err = io.StringIO()
    (tmp_path / "taken").mkdir()
    assert write_html_report(str(tmp_path / "taken"), Target.script("t.py"), DebugResult("ok", "finished"), err) is False
    assert "cannot write" in err.getvalue() and str(tmp_path / "taken") in err.getvalue()


# --------------------------------------------------------------------------- in a browser
def _chromium() -> str:
    """Debian's chromium (the VS Code end-to-end test's browser), installed with apt when missing."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    import importlib.util

    spec = importlib.util.spec_from_file_location("gw_editor_stack", ROOT / "tests" / "vscode" / "editor_stack.py")
    stack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stack)  # type: ignore[union-attr]
    try:
        stack.ensure_apt(["chromium"], ARTIFACTS / "logs")
    except stack.StackError as exc:
        pytest.fail(f"installing chromium failed:\n{exc}", pytrace=False)
    return CHROMIUM


def _browser(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    # No network (every host resolves to nothing, no proxy reachable): a page that needed one
    # would render without it. A fresh profile under the test's temporary folder.
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
            f"--user-data-dir={profile}", "--virtual-time-budget=3000"]
    return subprocess.run(base + list(args), capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, HOME=str(profile), XDG_CONFIG_HOME=str(profile / "config"),
                                   XDG_CACHE_HOME=str(profile / "cache")))


def _png_pixels(path: Path) -> Tuple[int, int, List[Tuple[int, int, int]]]:
    """(width, height, a sample of RGB pixels) of a non-interlaced 8-bit RGB/RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    sample = [tuple(rows[y][x * bpp:x * bpp + 3]) for y in range(0, height, 3) for x in range(0, width, 3)]
    return width, height, sample


def _luminance(pixels) -> float:
    return sum(0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in pixels) / max(len(pixels), 1)


@pytest.mark.parametrize("report", ["check", "debug"])
def test_the_reports_render_in_chromium_light_and_dark(reports, report, tmp_path):
    chromium = _chromium()
    page = reports[report]
    url = page.resolve().as_uri()
    expected = len(svgs(page.read_text(encoding="utf-8")))
    assert expected >= 3
    dom = _browser(chromium, tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the browser's own parse of the page: every picture is there, as SVG, with its events
    assert dom.stdout.count('class="timeline"') == expected and dom.stdout.count("<svg") == expected + 1  # + the key
    assert dom.stdout.count('data-kind="backward"') >= 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lum = {}
    for scheme, flags in (("light", []), ("dark", ["--force-dark-mode"])):  # the OS theme prefers-color-scheme reads
        shot = ARTIFACTS / f"{report}-{scheme}.png"
        if shot.exists():
            shot.unlink()
        proc = _browser(chromium, tmp_path / f"profile-{scheme}", *flags, "--window-size=1280,1800",
                        f"--screenshot={shot}", url)
        assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
        width, height, pixels = _png_pixels(shot)
        assert (width, height) == (1280, 1800)
        lum[scheme] = _luminance(pixels)
        # the pictures drew something: the error red and the save blue are on the page
        reds = sum(1 for r, g, b in pixels if r > g + 90 and r > b + 90)
        blues = sum(1 for r, g, b in pixels if b > r + 90)
        assert reds > 20 and blues > 20, (scheme, reds, blues)
    assert lum["light"] > 200 and lum["dark"] < 70, lum  # prefers-color-scheme followed both ways
