"""The live view in a real headless browser (Debian's chromium driven by Playwright, no browser download):
``mbstate demo --view`` runs the node on virtual sensors and prints the page's URL; the page must update
and draw the mechanism, the series and the health.

It skips only off CI with no browser (or no Playwright) installed; ``.ci/run`` installs chromium and sets
CI=1, so there it runs or fails. MBSTATE_VIEW_SCREENSHOT=PATH also saves the screenshot there (docs/view.md
says how docs/view.png was taken). The viewer's cost to the node is measured by the demo's summary
(docs/view.md), not here.
"""

from __future__ import annotations

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


@pytest.fixture()
def demo():
    """``mbstate demo --view`` running, and the URL it printed."""
    process = subprocess.Popen([sys.executable, "-m", "estimator", "demo", "--view", "--sigmas", "--duration",
                                str(DEMO_S)], cwd=REPO, stdout=subprocess.PIPE, text=True)
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


def test_the_view_of_the_demo_updates_and_draws_the_mechanism_the_series_and_the_health(sync_playwright, demo,
                                                                                        tmp_path):
    process, url = demo
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 760})
            page.goto(url)
            page.wait_for_function("document.getElementById('time').textContent !== '–'", timeout=FRAME_WAIT_MS)
            first, before = int(page.inner_text("#frame")), page.screenshot()
            page.wait_for_function(f"Number(document.getElementById('frame').textContent) > {first + 10}",
                                   timeout=10_000)
            after = page.screenshot()
            drawn = page.evaluate(DRAWN)
            health = page.inner_text("#health")
            page.screenshot(path=tmp_path / "view.png", full_page=True)
        finally:
            browser.close()
    if target := os.environ.get("MBSTATE_VIEW_SCREENSHOT"):
        shutil.copy(tmp_path / "view.png", target)
    assert before != after  # the page moved on
    charts = {"theta0", "motor", "theta0 − truth", "motor − truth", "reading crank_encoder", "reading coupler_gyro",
              "reading coupler_accelerometer", "reading rocker_load_cell"}
    assert charts | {"scene"} <= set(drawn)
    assert {name: n for name, n in drawn.items() if n < 100} == {}  # every canvas has its lines
    assert "latency p50" in health and "p99" in health and "degradation level" in health and "overruns" in health
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and "four-bar demo:" in out
