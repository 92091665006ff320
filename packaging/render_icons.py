#!/usr/bin/env python3
"""Render resources/icons/session-studio.svg into the hicolor PNG sizes.

    python packaging/render_icons.py            # regenerate all PNGs
    python packaging/render_icons.py --check    # exit 1 if a PNG is missing or has the wrong size

The PNGs are committed, so this script is only needed after editing the SVG, never at build
or install time.  It renders with PySide6's QtSvg when that is importable, else with
``rsvg-convert`` (Debian: librsvg2-bin), else with ImageMagick's ``convert``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

APP_ID = "io.github.session_studio.SessionStudio"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SVG = ICONS / "session-studio.svg"


def png_path(size: int, icons: Path = ICONS) -> Path:
    return icons / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    with path.open("rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG")
    w, h = struct.unpack(">II", head[16:24])
    return w, h


def _render_qt(svg: Path, jobs: list[tuple[int, Path]]) -> bool:
    try:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QGuiApplication, QImage, QPainter
        from PySide6.QtSvg import QSvgRenderer
    except ImportError:
        return False
    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"QtSvg cannot read {svg}")
    for size, out in jobs:
        img = QImage(size, size, QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.transparent)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        renderer.render(p)
        p.end()
        out.parent.mkdir(parents=True, exist_ok=True)
        if not img.save(str(out)):  # format from the .png suffix
            raise SystemExit(f"could not write {out}")
    return True


def _render_tool(svg: Path, jobs: list[tuple[int, Path]]) -> bool:
    rsvg = shutil.which("rsvg-convert")
    magick = shutil.which("magick") or shutil.which("convert")
    if not rsvg and not magick:
        return False
    for size, out in jobs:
        out.parent.mkdir(parents=True, exist_ok=True)
        if rsvg:
            cmd = [rsvg, "-w", str(size), "-h", str(size), "-o", str(out), str(svg)]
        else:
            cmd = [magick or "convert", "-background", "none", "-density", str(max(72, size * 72 // 128 * 2)),
                   str(svg), "-resize", f"{size}x{size}", str(out)]
        subprocess.run(cmd, check=True)
    return True


def check(icons: Path = ICONS) -> list[str]:
    problems = []
    for size in SIZES:
        p = png_path(size, icons)
        if not p.is_file():
            problems.append(f"missing {p}")
            continue
        if png_size(p) != (size, size):
            problems.append(f"{p}: {png_size(p)} instead of {(size, size)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check that every PNG exists with the right size")
    ap.add_argument("--svg", type=Path, default=SVG)
    ap.add_argument("--out", type=Path, default=ICONS, help="icons folder (default resources/icons)")
    ap.add_argument("--tool", choices=("auto", "qt", "rsvg"), default="auto",
                    help="renderer: QtSvg, rsvg-convert/ImageMagick, or the first available (default)")
    a = ap.parse_args(argv)

    if a.check:
        problems = check(a.out)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0

    jobs = [(size, png_path(size, a.out)) for size in SIZES]
    done = False
    if a.tool in ("auto", "qt"):
        done = _render_qt(a.svg, jobs)
    if not done and a.tool in ("auto", "rsvg"):
        done = _render_tool(a.svg, jobs)
    if not done:
        print("no renderer: install PySide6 (QtSvg) or rsvg-convert (librsvg2-bin)", file=sys.stderr)
        return 1
    for _size, out in jobs:
        print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  {png_size(out)[0]}px")
    return 0


if __name__ == "__main__":
    sys.exit(main())
