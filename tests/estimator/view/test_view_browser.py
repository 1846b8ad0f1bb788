"""The live view in a real headless browser (Debian's chromium driven by Playwright, no browser download):
``mbstate demo --view`` runs the node on virtual sensors and prints the page's URL; the page must update
and draw the mechanism, the series and the health, and stand still while hidden: the planar four-bar, and
the Panda arm in 3-D (``--mechanism panda``: its skeleton, estimate and truth, turned by a drag).

It skips only off CI with no browser (or no Playwright) installed; ``.ci/run`` installs chromium and sets
CI=1, so there it runs or fails. MBSTATE_VIEW_SCREENSHOT=PATH (MBSTATE_VIEW_PANDA_SCREENSHOT=PATH for the
arm) also saves the screenshot there (docs/view.md says how docs/view.png and docs/view_panda.png were
taken). The viewer's cost to the node is measured by the demo's summary (docs/view.md), not here.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
URL_WAIT_S = 120.0  # [s]: a first run compiles the numeric kernels before the node starts
FRAME_WAIT_MS = 60_000  # [ms] for the first frame with an estimate
DEMO_S = 12  # [s] of simulated readings: the page is watched while they flow
# pixels drawn (alpha > 0) on each canvas: the mechanism and every series
DRAWN = """() => Object.fromEntries([...document.querySelectorAll('canvas')].map(c => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
  return [c.id || c.dataset.name, n];
}))"""
# pixels of the scene canvas near a colour: the estimate's blue, the truth's orange (page.html)
COLOURED = """([r, g, b]) => {
  const c = document.getElementById('scene'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0; for (let i = 0; i < d.length; i += 4)
    if (d[i + 3] > 128 && Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 60) n++;
  return n;
}"""
BLUE, ORANGE = (0x1F, 0x5F, 0xBF), (0xD0, 0x67, 0x1A)
# the page hidden (true) or shown again (false), as the browser tells it when a tab goes behind another
VISIBILITY = """hidden => {
  Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
  document.dispatchEvent(new Event('visibilitychange'));
}"""


@pytest.fixture(scope="module")
def sync_playwright():
    """Playwright's sync API, or a skip off CI when it or chromium is missing (a failure in CI)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or CHROMIUM is None:
        missing = ("Playwright (pip install -e '.[test]')" if sync_playwright is None
                   else "chromium (apt-get install chromium)")
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {missing} is not installed: the browser test must run in CI")
        pytest.skip(f"{missing} is not installed")
    return sync_playwright


@contextlib.contextmanager
def demo_view(*options: str):
    """``mbstate demo --view OPTIONS`` running, and the URL it printed."""
    process = subprocess.Popen([sys.executable, "-m", "estimator", "demo", "--view", *options], cwd=REPO,
                               stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], URL_WAIT_S)
        url = process.stdout.readline().strip() if ready else ""
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), f"not a URL line: {url!r}"
        yield process, url
    finally:
        if process.poll() is None:
            process.terminate()  # the demo's node stops on SIGTERM, the view with it
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


@pytest.fixture()
def demo():
    with demo_view("--sigmas", "--duration", str(DEMO_S)) as running:
        yield running


@pytest.fixture()
def panda_demo():
    with demo_view("--mechanism", "panda", "--duration", str(DEMO_S)) as running:
        yield running


def launched(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])


def opened(browser, url: str):
    """The view at ``url`` in a new page, once its first estimate is shown."""
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    page.goto(url)
    page.wait_for_function("document.getElementById('time').textContent !== '–'", timeout=FRAME_WAIT_MS)
    return page


def frames_past(page, count: int) -> None:
    """Wait until the page's frame counter passes ``count``."""
    page.wait_for_function(f"Number(document.getElementById('frame').textContent) > {count}", timeout=10_000)


def test_the_view_of_the_demo_updates_and_draws_the_mechanism_the_series_and_the_health(sync_playwright, demo,
                                                                                        tmp_path):
    process, url = demo
    with sync_playwright() as playwright:
        browser = launched(playwright)
        try:
            page = opened(browser, url)
            first, before = int(page.inner_text("#frame")), page.screenshot()
            frames_past(page, first + 10)
            after = page.screenshot()
            drawn = page.evaluate(DRAWN)
            health = page.inner_text("#health")
            page.screenshot(path=tmp_path / "view.png", full_page=True)
            page.evaluate(VISIBILITY, True)  # another tab in front: the stream closed, nothing drawn
            page.wait_for_timeout(500)
            hidden = page.inner_text("#frame")
            page.wait_for_timeout(1000)
            still = page.inner_text("#frame")
            page.evaluate(VISIBILITY, False)
            frames_past(page, still)
        finally:
            browser.close()
    if target := os.environ.get("MBSTATE_VIEW_SCREENSHOT"):
        shutil.copy(tmp_path / "view.png", target)
    assert before != after  # the page moved on
    assert hidden == still  # and stood still while hidden, then went on
    charts = {"theta0", "motor", "theta0 − truth", "motor − truth", "reading crank_encoder", "reading coupler_gyro",
              "reading coupler_accelerometer", "reading rocker_load_cell"}
    assert charts | {"scene"} <= set(drawn)
    assert {name: n for name, n in drawn.items() if n < 100} == {}  # every canvas has its lines
    assert "latency p50" in health and "p99" in health and "degradation level" in health and "overruns" in health
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and "four-bar demo:" in out


def test_the_view_of_the_panda_demo_draws_the_arm_in_3d_with_its_truth_and_turns_when_dragged(sync_playwright,
                                                                                           panda_demo, tmp_path):
    process, url = panda_demo
    with sync_playwright() as playwright:
        browser = launched(playwright)
        try:
            page = opened(browser, url)
            first = int(page.inner_text("#frame"))
            frames_past(page, first + 5)
            layout = page.evaluate("layout")
            blue, orange = page.evaluate(COLOURED, BLUE), page.evaluate(COLOURED, ORANGE)
            before = page.evaluate("view.azimuth")
            box = page.locator("#scene").bounding_box()
            page.mouse.move(box["x"] + 100, box["y"] + 100)
            page.mouse.down()
            page.mouse.move(box["x"] + 250, box["y"] + 100, steps=5)
            page.mouse.up()
            turned = page.evaluate("view.azimuth") - before
            drawn = page.evaluate(DRAWN)
            page.screenshot(path=tmp_path / "view_panda.png", full_page=True)
        finally:
            browser.close()
    if target := os.environ.get("MBSTATE_VIEW_PANDA_SCREENSHOT"):
        shutil.copy(tmp_path / "view_panda.png", target)
    assert layout["kind"] == "spatial" and len(layout["segments"]) == 12 and layout["truth"]
    assert blue > 200 and orange > 50  # the arm's estimate drawn, its truth dashed beside it
    assert turned == pytest.approx(1.5, abs=0.2)  # 150 px of drag at 0.01 rad per px
    assert {name: n for name, n in drawn.items() if n < 100} == {}
    assert {"panda_joint1", "Q.panda_joint1", "reading joint1_encoder"} <= set(drawn)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and "Panda arm demo:" in out
