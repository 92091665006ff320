"""Packaging files: desktop entry, AppStream metainfo, MIME type, icons, install script, PyInstaller spec.

The validators (`desktop-file-validate` from desktop-file-utils, `appstreamcli` from appstream)
are run when installed and the tests are skipped otherwise.
"""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import session_studio

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
ICONS = ROOT / "resources" / "icons"
APP_ID = "io.github.session_studio.SessionStudio"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
MIME_XML = PACKAGING / f"{APP_ID}.mime.xml"
SVG = ICONS / "session-studio.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:33]
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    length, chunk = struct.unpack(">I4s", head[8:16])
    assert chunk == b"IHDR" and length == 13, f"{path}: first chunk is not IHDR"
    width, height, depth, colour = struct.unpack(">IIBB", head[16:26])
    assert colour in (4, 6), f"{path}: no alpha channel (PNG colour type {colour})"
    assert depth == 8
    return width, height


def read_desktop(path: Path) -> configparser.SectionProxy:
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    cp.read(path, encoding="utf-8")
    return cp["Desktop Entry"]


# --- icons -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_png_icon_exists_with_right_size(size: int) -> None:
    png = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    assert png.is_file(), f"missing {png.relative_to(ROOT)}: run packaging/render_icons.py"
    assert png_size(png) == (size, size)


def test_no_stray_icon_sizes() -> None:
    found = {p.parent.parent.name for p in (ICONS / "hicolor").glob("*/apps/*.png")}
    assert found == {f"{n}x{n}" for n in SIZES}


def test_svg_parses_and_is_square() -> None:
    root = ET.parse(SVG).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, w, h = (float(v) for v in root.attrib["viewBox"].split())
    assert (x, y) == (0, 0) and w == h > 0
    assert root.find("{http://www.w3.org/2000/svg}text") is None, "no text: fonts differ between renderers"
    # no embedded raster images or external references: the icon must stay self-contained
    for el in root.iter():
        assert not el.tag.endswith("}image"), "the SVG icon must not embed raster images"
        assert not any(k.endswith("href") for k in el.attrib), "the SVG icon must not reference files"


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
def test_render_icons_regenerates_every_size(tmp_path: Path) -> None:
    pytest.importorskip("PySide6.QtSvg")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    subprocess.run(
        [sys.executable, str(PACKAGING / "render_icons.py"), "--tool", "qt", "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    for size in SIZES:
        png = tmp_path / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert png_size(png) == (size, size)
    check = subprocess.run(
        [sys.executable, str(PACKAGING / "render_icons.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr


# --- desktop entry -----------------------------------------------------------------------------


def test_desktop_entry_keys() -> None:
    d = read_desktop(DESKTOP)
    assert d["Type"] == "Application"
    assert d["Exec"] == "session-studio %f"
    assert d["TryExec"] == "session-studio"
    assert d["Icon"] == APP_ID
    assert d["Terminal"] == "false"
    assert "Development" in d["Categories"].split(";")
    assert d["Keywords"].endswith(";") and d["MimeType"].endswith(";")
    assert "application/x-pi-session+jsonl" in d["MimeType"].split(";")


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_file_validate() -> None:
    r = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0, out
    assert out == "", f"desktop-file-validate reported:\n{out}"  # no errors, warnings or hints


# --- AppStream metainfo ------------------------------------------------------------------------


def test_metainfo_content() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == "MIT"
    launchable = root.find("launchable")
    assert launchable is not None and launchable.text == DESKTOP.name
    assert root.findtext("provides/binary") == "session-studio"
    shots = root.findall("screenshots/screenshot")
    assert [Path(s.findtext("image") or "").name for s in shots] == [
        "main.png",
        "split-turn.png",
        "preview.png",
    ]
    assert all((s.findtext("caption") or "").strip() for s in shots)
    assert sum(s.get("type") == "default" for s in shots) == 1
    releases = root.findall("releases/release")
    assert releases, "no <release>"
    assert releases[0].get("version") == session_studio.__version__, (
        "newest <release> is not the package version"
    )


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream not installed")
def test_appstreamcli_validate() -> None:
    r = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--no-color", str(METAINFO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0, out
    problems = [line for line in out.splitlines() if line[:2] in ("E:", "W:")]
    assert not problems, out


def test_mime_package() -> None:
    ns = "{http://www.freedesktop.org/standards/shared-mime-info}"
    root = ET.parse(MIME_XML).getroot()
    assert root.tag == f"{ns}mime-info"
    types = [m.get("type") for m in root.findall(f"{ns}mime-type")]
    assert types == ["application/x-pi-session+jsonl"]
    match = root.find(f"{ns}mime-type/{ns}magic/{ns}match")
    assert match is not None
    value = match.get("value", "")
    fixture = Path("/work/shared/oracle/fixtures/large-session.jsonl")
    header = fixture.read_bytes()[:64] if fixture.is_file() else b'{"type":"session","version":3}'
    assert value and header.startswith(value.encode())


# --- install script and PyInstaller spec --------------------------------------------------------


def test_install_desktop_script(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    script = PACKAGING / "install-desktop.sh"
    r = subprocess.run(
        ["sh", str(script), "--exec", sys.executable], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    desktop = tmp_path / "applications" / DESKTOP.name
    exec_value = read_desktop(desktop)["Exec"]
    assert exec_value in (f"{sys.executable} %f", f'"{sys.executable}" %f'), exec_value
    for size in SIZES:
        assert (tmp_path / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    assert (tmp_path / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert (tmp_path / "metainfo" / METAINFO.name).is_file()
    assert (tmp_path / "mime" / "packages" / MIME_XML.name).is_file()
    if shutil.which("desktop-file-validate"):
        v = subprocess.run(
            ["desktop-file-validate", str(desktop)], capture_output=True, text=True, timeout=60
        )
        assert v.returncode == 0 and not (v.stdout + v.stderr).strip(), v.stdout + v.stderr

    r = subprocess.run(
        ["sh", str(script), "--uninstall"], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert not desktop.exists()
    assert not list((tmp_path / "icons").rglob(f"{APP_ID}.*"))


def test_pyinstaller_files_are_python() -> None:
    spec = (PACKAGING / "session-studio.spec").read_text(encoding="utf-8")
    ast.parse(spec, filename="session-studio.spec")
    assert "QtWebEngineCore" in spec and "console=not windowed" in spec
    entry = (PACKAGING / "pyinstaller_entry.py").read_text(encoding="utf-8")
    assert "from session_studio.cli import main" in entry
    ast.parse(entry)
