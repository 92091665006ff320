"""An entry kind is the same colour in a shared report as in the window (core.role_colors)."""

from __future__ import annotations

from session_studio.core.role_colors import ROLE_COLORS
from session_studio.export import html_writer


def test_the_reports_kind_colours_are_the_windows() -> None:
    css = html_writer._CSS
    light, dark = css.split("@media (prefers-color-scheme: dark)")
    for kind, (light_hex, dark_hex) in ROLE_COLORS.items():
        assert f"--{kind}:{light_hex};" in light
        assert f"--{kind}:{dark_hex};" in dark
    assert "@ROLES" not in css
