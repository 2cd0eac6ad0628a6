"""The HELM leaderboard in a real browser: ``helm-summarize`` with our schema, ``helm-server``,
and headless Chromium rendering HELM's React frontend.

Uses the runs of ``test_report.py`` (made once per session, summarized as ``make run`` does: with
the schema and model metadata of ``syntaxgym-helm leaderboard config``). Checks that the SG score
table, a circuit table, every model's display name and score are on screen, that no column is
empty, and takes a screenshot (under the test's tmp folder; ``docs/leaderboard.png`` is made from a
full run by ``scripts/leaderboard_screenshot.py``).

Needs Chromium: on Debian/Ubuntu ``apt-get update && apt-get install -y chromium``; skipped with
that advice where it is absent.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report import GEMMA, RUN_SUITE, SMOLLM, SMOLLM_FAST, Runs, produce_runs

BIN = Path(sys.executable).parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM = next((path for name in BROWSERS if (path := shutil.which(name))), None)
# Flags that work as root in a container with no display, GPU or network.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
# HELM's frontend routes with the URL fragment: #/leaderboard/<run group name>.
SG_SCORE_PAGE = "#/leaderboard/syntaxgym_sg_score"
AGREEMENT_PAGE = "#/leaderboard/syntaxgym_circuit_agreement"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian/Ubuntu: "
                                                "apt-get update && apt-get install -y chromium)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return produce_runs(tmp_path_factory)


@pytest.fixture(scope="module")
def server(runs: Runs) -> Iterator[str]:
    """helm-server on a free port; yields its base URL."""
    port = _free_port()
    process = subprocess.Popen(
        [str(BIN / "helm-server"), "--port", str(port), "--output-path", str(runs.output),
         "--suite", RUN_SUITE], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "config.js", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"chromium-profile-{time.monotonic_ns()}"  # fresh: no state between runs
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def _rendered_text(tmp_path: Path, url: str) -> str:
    """The page's visible text after the React app has rendered it."""
    done = _chromium(tmp_path, "--virtual-time-budget=15000", "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", done.stdout, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", dom)))


def _shown(value: float) -> str:
    """How the frontend prints a score: rounded to three decimals (halves up), no trailing
    zeros (0.5625 -> 0.563, 0.5 -> 0.5)."""
    rounded = Decimal(value).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP).normalize()
    return format(rounded, "f")


def _models(runs: Runs) -> list[str]:
    """The models that ran, as the leaderboard must name them."""
    ran = [SMOLLM, SMOLLM_FAST, *([GEMMA] if runs.gemma is None else [])]
    return [runs.display_name(model) for model in ran]


def test_leaderboard_shows_our_tables_and_scores(runs: Runs, server: str,
                                                 tmp_path: Path) -> None:
    groups = runs.run_suite_dir / "groups"
    table = json.loads((groups / "syntaxgym_sg_score.json").read_text())[0]
    scores = {row[0]["value"]: row[1]["value"] for row in table["rows"]}
    # Only the suites run are columns: none is empty (Gemma runs number_prep only, so its
    # fgd_subject cell is; SmolLM2 ran both and has every number).
    assert [cell["value"] for cell in table["header"]] == [
        "Model", "Mean score", "fgd_subject - Accuracy", "number_prep - Accuracy"]
    assert all(any(row[i].get("value") is not None for row in table["rows"])
               for i in range(len(table["header"])))
    (smollm_row,) = [row for row in table["rows"] if row[0]["value"] == runs.display_name(SMOLLM)]
    assert all(cell.get("value") is not None for cell in smollm_row)
    text = _rendered_text(tmp_path, server + SG_SCORE_PAGE)
    assert "Leaderboard: SG score (31 suites)" in text
    assert "number_prep - Accuracy" in text and "fgd_subject - Accuracy" in text
    assert "SmolLM2 135M Instruct (Q4_1 GGUF) [HELM HuggingFaceClient]" in text
    assert SMOLLM not in text  # the display name, not the HELM name
    assert set(scores) == set(_models(runs))
    for model in _models(runs):  # each model's row starts with its name and its score
        assert f"{model} {_shown(scores[model])}" in text
    for circuit in ("Agreement", "Long-Distance Dependencies"):
        assert f"Circuit: {circuit}" in text  # the group selector lists the circuits run...
    assert "Circuit: Garden-Path Effects" not in text  # ... and no empty one

    agreement = json.loads((groups / "syntaxgym_circuit_agreement.json").read_text())[0]
    circuit_scores = {row[0]["value"]: row[1]["value"] for row in agreement["rows"]}
    text = _rendered_text(tmp_path, server + AGREEMENT_PAGE)
    assert "Leaderboard: Circuit: Agreement" in text
    for model in _models(runs):
        assert f"{model} {_shown(circuit_scores[model])}" in text


def test_leaderboard_screenshot(runs: Runs, server: str, tmp_path: Path) -> None:
    import matplotlib.image

    shot = tmp_path / "leaderboard.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,1000",
                     "--virtual-time-budget=15000", server + SG_SCORE_PAGE)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1000, 1400)
    assert shot.stat().st_size > 20_000 and pixels[..., :3].std() > 0.05  # not a blank page
