"""Screenshot of a leaderboard page: ``helm-server`` on 127.0.0.1 and headless Chromium.

    python scripts/leaderboard_screenshot.py BENCHMARK_OUTPUT --suite RUN_SUITE \
        [--page syntaxgym_sg_score] [-o docs/leaderboard.png] [--size 1600,760]

Run ``syntaxgym-helm leaderboard config`` and ``helm-summarize`` first (``make run`` does). How
``docs/leaderboard.png`` was made: the 34 suites of Hu et al. (2020) with both embedded models::

    SYNTAXGYM_SUITES_DIR=../shared/suites/hu2020 helm-run \
        --conf-paths run_specs/syntaxgym_hu2020.conf \
        --models-to-run syntaxgym/smollm2-135m-instruct-q4_1 syntaxgym/gemma-3-270m-q4_k_m \
        --suite hu2020 --max-eval-instances 100000
    syntaxgym-helm leaderboard config benchmark_output --suite hu2020   # then its helm-summarize
    python scripts/leaderboard_screenshot.py benchmark_output --suite hu2020 -o docs/leaderboard.png

Every wait has a deadline: the server must answer within 60 s, Chromium finish within 120 s.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Flags that work as root in a container with no display, GPU or network.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
SERVER_DEADLINE_S = 60
CHROMIUM_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVER_DEADLINE_S
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError as error:
            if process.poll() is not None:
                raise RuntimeError(
                    f"helm-server exited with status {process.returncode}") from error
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"helm-server did not answer {url} in {SERVER_DEADLINE_S} s") from error
            time.sleep(0.5)


def screenshot(output: Path, run_suite: str, page: str, target: Path, size: str) -> None:
    chromium = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if chromium is None:
        raise FileNotFoundError("Chromium is not installed (Debian/Ubuntu: apt-get update && "
                                "apt-get install -y chromium)")
    if not (output / "runs" / run_suite / "groups" / f"{page}.json").is_file():
        raise FileNotFoundError(f"{output}/runs/{run_suite}/groups/{page}.json is missing: run "
                                "syntaxgym-helm leaderboard config and helm-summarize first")
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "helm-server"), "--port", str(port), "--output-path",
         str(output), "--suite", run_suite],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        _wait_for(base + "config.js", server)
        with tempfile.TemporaryDirectory() as profile:
            target.parent.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                 f"--screenshot={target.resolve()}", f"--window-size={size}",
                 "--virtual-time-budget=15000", f"{base}#/leaderboard/{page}"],
                capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
        if done.returncode != 0 or not target.is_file():
            raise RuntimeError(f"Chromium failed: {done.stderr[-2000:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark_output", type=Path)
    parser.add_argument("--suite", required=True, help="HELM's run suite (helm-run --suite)")
    parser.add_argument("--page", default="syntaxgym_sg_score", help="the run group to show")
    parser.add_argument("-o", "--output", type=Path, default=Path("leaderboard.png"))
    parser.add_argument("--size", default="1600,760", help="window WIDTH,HEIGHT in pixels")
    args = parser.parse_args(argv)
    try:
        screenshot(args.benchmark_output, args.suite, args.page, args.output, args.size)
    except (FileNotFoundError, RuntimeError, TimeoutError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
