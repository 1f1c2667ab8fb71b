"""Make the documentation's pictures from the real studio.

    python docs/screenshots.py            # writes docs/images/*.png (and keeps no SVG)

Drives :class:`rubric_studio.tui.app.StudioApp` with Textual's Pilot on the bundled support-reply
rubric at 140×40, judged by the local fake judge of the test suite (``tests/fakellm.py``: real HTTP
on 127.0.0.1, so no key and no network), saves Textual's SVG screenshot of each pane and converts
it to PNG with ``rsvg-convert`` (Debian: ``apt-get install -y librsvg2-bin``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
SIZE = (140, 40)
#: picture name -> the keys pressed after the first screen settles
SHOTS = {
    "studio": [],
    "editor": ["f2"],
    "results": ["f3", "down", "down"],
    "inspector": ["f3", "down", "down", "f4"],
    "agreement": ["f6"],
}


async def _settled(app, pilot, timeout: float = 30.0) -> None:
    """Wait until no judge call is in flight and the screen stops changing."""
    started = time.monotonic()
    previous = None
    while time.monotonic() - started < timeout:
        await pilot.pause(0.3)
        text = app.export_screenshot().replace("&#160;", " ")
        if " 0 in flight" in text and text == previous:
            return
        previous = text
    print("warning: the screen kept changing; taking the picture anyway", file=sys.stderr)


async def _shoot(name: str, keys: list[str], rubric: Path, base_url: str, cache: Path, out: Path) -> Path:
    from rubric_studio.tui.app import StudioApp

    app = StudioApp(rubric, judge="openai-compatible:fake-judge", base_url=base_url, cache_path=cache,
                    watch=False, annotator="alice")  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await _settled(app, pilot)
        for key in keys:
            await pilot.press(key)
        await _settled(app, pilot)
        svg = out / f"{name}.svg"
        svg.write_text(app.export_screenshot(title=f"rubric-studio — {name}"), encoding="utf-8")
    return svg


def main() -> int:
    if shutil.which("rsvg-convert") is None:
        print("rsvg-convert is missing: apt-get install -y librsvg2-bin", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from tests.fakellm import FakeLLM

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as server:
        work = Path(tmp)
        os.environ.setdefault("RUBRIC_STUDIO_HOME", str(work / "config"))
        os.environ["OPENAI_API_KEY"] = "sk-screenshots"
        shutil.copytree(ROOT / "sample_rubrics" / "support_reply", work / "support_reply")
        rubric = work / "support_reply" / "support_reply.yaml"
        for name, keys in SHOTS.items():
            svg = asyncio.run(_shoot(name, keys, rubric, server.base_url_openai, work / "cache.sqlite", work))
            png = IMAGES / f"{name}.png"
            subprocess.run(["rsvg-convert", "--zoom", "1", "-o", str(png), str(svg)], check=True)
            print(png.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
