"""Headless Chromium: screenshots of reports, and the console errors a page produced."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

# Without the background-networking flags Chromium keeps dialling out, which an offline
# machine refuses; --no-sandbox is needed when running as root.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


class PageCheck(BaseModel):
    png: Path
    console_errors: list[str]


class BrowserUnavailableError(RuntimeError):
    """No Chromium to render with: a missing tool, not bad input."""


def find_chromium() -> str:
    exe = (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if exe is None:
        raise BrowserUnavailableError(
            "Chromium not found: install it (Debian: apt-get install chromium) for screenshots"
        )
    return exe


def screenshot(page: Path, png: Path, *, width: int = 1320, height: int = 2400) -> PageCheck:
    """Render ``page`` to ``png``; console messages (errors, uncaught exceptions) are returned."""
    with tempfile.TemporaryDirectory(prefix="sira-chromium-") as profile:
        res = subprocess.run(
            [
                find_chromium(),
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={png}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if res.returncode != 0 or not png.exists():
        raise RuntimeError(f"Chromium could not render {page}: {res.stderr[-800:]}")
    console = [ln for ln in res.stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]
    return PageCheck(png=png, console_errors=console)
