"""Light and dark palettes, role colours and the painted entry-type icons."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeVar

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QStyleOptionComplex,
    QWidget,
)

from session_studio.core.role_colors import ROLE_COLORS, role_hex

__all__ = ["Theme", "apply_theme", "current_theme", "entry_icon", "kind_of", "role_color"]

_ICON_LETTERS = {
    "user": "U",
    "assistant": "A",
    "toolResult": "T",
    "bashExecution": "$",
    "custom": "C",
    "branchSummary": "B",
    "compaction": "≡",
    "compactionSummary": "≡",
    "system": "S",
    "contextEdit": "✎",
    "usage": "¤",
    "meta": "·",
    "damaged": "!",
}


class Theme:
    def __init__(self, dark: bool) -> None:
        self.dark = dark
        self.name = "dark" if dark else "light"
        if dark:
            self.window = QColor("#1e2025")
            self.base = QColor("#17181c")
            self.alt_base = QColor("#1c1e22")
            self.text = QColor("#dfe2e7")
            self.muted = QColor("#8d939d")
            self.button = QColor("#2a2d33")
            self.highlight = QColor("#2f5fa8")
            self.grid = QColor("#33363d")
            self.reserve = QColor(200, 70, 60, 60)
            self.keep = QColor(90, 160, 255, 45)
            self.warn_bg = QColor("#4a3b12")
            self.warn_fg = QColor("#ffd98a")
            self.active_bg = QColor(70, 130, 230, 38)
        else:
            self.window = QColor("#f3f4f6")
            self.base = QColor("#ffffff")
            self.alt_base = QColor("#f7f8fa")
            self.text = QColor("#1d2128")
            self.muted = QColor("#6b7280")
            self.button = QColor("#e9ebef")
            self.highlight = QColor("#cfe0fb")
            self.grid = QColor("#d9dce1")
            self.reserve = QColor(220, 70, 50, 40)
            self.keep = QColor(47, 111, 222, 30)
            self.warn_bg = QColor("#fff4d6")
            self.warn_fg = QColor("#6b4a00")
            self.active_bg = QColor(47, 111, 222, 22)
        #: the outline of the control with the keyboard focus (about 4.6:1 on either window)
        self.focus = QColor("#2f6fde") if not dark else QColor("#6ea8ff")
        self.cut = QColor("#e5484d") if not dark else QColor("#ff6369")
        self.turn_start = QColor("#d97706") if not dark else QColor("#f5a524")
        self.prefix = QColor(217, 119, 6, 60) if not dark else QColor(245, 165, 36, 60)
        self.threshold = QColor("#b91c1c") if not dark else QColor("#ff8080")
        self.cut_bg = QColor(self.cut.red(), self.cut.green(), self.cut.blue(), 55)
        self.valid_cut = QColor("#16a34a") if not dark else QColor("#4ade80")
        #: a search's matches in the inspector
        self.match_bg = QColor("#ffe27a") if not dark else QColor("#7a5f12")
        self.usage = QColor("#1d2128") if not dark else QColor("#dfe2e7")

    def __getattribute__(self, name: str) -> Any:
        # the theme is shared by every widget: hand out copies, so a caller's setAlpha()/setRed()
        # cannot change what others paint with (the cut row once faded the token bar's cut line)
        value = object.__getattribute__(self, name)
        return QColor(value) if type(value) is QColor else value

    def role(self, kind: str) -> QColor:
        return QColor(role_hex(kind, self.dark))

    def palette(self) -> QPalette:
        p = QPalette()
        R = QPalette.ColorRole
        p.setColor(R.Window, self.window)
        p.setColor(R.WindowText, self.text)
        p.setColor(R.Base, self.base)
        p.setColor(R.AlternateBase, self.alt_base)
        p.setColor(R.ToolTipBase, self.base)
        p.setColor(R.ToolTipText, self.text)
        p.setColor(R.Text, self.text)
        p.setColor(R.Button, self.button)
        p.setColor(R.ButtonText, self.text)
        p.setColor(R.BrightText, QColor("#ff5555"))
        p.setColor(R.Highlight, self.highlight)
        p.setColor(R.HighlightedText, QColor("#ffffff") if self.dark else self.text)
        p.setColor(R.PlaceholderText, self.muted)
        p.setColor(R.Link, QColor("#5b9cff") if self.dark else QColor("#1f5fcc"))
        p.setColor(R.Mid, self.grid)
        p.setColor(R.Midlight, self.grid)
        p.setColor(R.Dark, self.grid.darker(130))
        p.setColor(R.Light, self.base)
        for role in (R.Text, R.WindowText, R.ButtonText):
            p.setColor(QPalette.ColorGroup.Disabled, role, self.muted)
        return p


_current: Theme | None = None


def system_prefers_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    try:
        return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    except AttributeError:  # pragma: no cover - Qt < 6.5
        return False


class _Style(QProxyStyle):
    """Fusion, with check box and radio button frames that show on the dark palette: Fusion draws
    them in the window colour darkened, which on a dark window is all but invisible."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, _focus_drawn(option, element in _FOCUS_PRIMITIVES), painter, widget)
        box = element == QStyle.PrimitiveElement.PE_IndicatorCheckBox
        if (
            not (box or element == QStyle.PrimitiveElement.PE_IndicatorRadioButton)
            or not current_theme().dark
        ):
            return
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        color = QColor(current_theme().muted)
        if not enabled:
            color.setAlpha(110)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not box)
        painter.setPen(QPen(color, 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        r = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        if box:
            painter.drawRect(r)
        else:
            painter.drawEllipse(r)
        painter.restore()

    def drawComplexControl(
        self,
        control: QStyle.ComplexControl,
        option: QStyleOptionComplex,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawComplexControl(control, _focus_drawn(option, control in _FOCUS_CONTROLS), painter, widget)


#: what Fusion outlines in the highlight colour when it has the keyboard focus: a button or tool
#: button (combo boxes draw theirs), a line edit, the focus rectangle (check boxes, tabs), spin boxes, sliders
_FOCUS_PRIMITIVES = frozenset(
    {
        QStyle.PrimitiveElement.PE_PanelButtonCommand,
        QStyle.PrimitiveElement.PE_PanelButtonTool,
        QStyle.PrimitiveElement.PE_PanelLineEdit,
        QStyle.PrimitiveElement.PE_FrameLineEdit,
        QStyle.PrimitiveElement.PE_FrameFocusRect,
    }
)
_FOCUS_CONTROLS = frozenset(
    {QStyle.ComplexControl.CC_SpinBox, QStyle.ComplexControl.CC_Slider, QStyle.ComplexControl.CC_ComboBox}
)
_OptionT = TypeVar("_OptionT", bound=QStyleOption)


def _focus_drawn(option: _OptionT, outlined: bool) -> _OptionT:
    """``option`` with the theme's focus colour as its highlight, for a control that has the keyboard
    focus: Fusion outlines it in the highlight, which in the light theme is the pale selection blue
    (about 1.3:1 on the window) and showed no focus a keyboard user could find. Selections (item
    views, selected text) keep the pale highlight: they are other elements."""
    if not outlined or not option.state & QStyle.StateFlag.State_HasFocus:
        return option
    focused = type(option)(option)
    focused.palette.setColor(QPalette.ColorRole.Highlight, current_theme().focus)
    return focused


def plain_style(owner: QWidget) -> QStyle:
    """Fusion without our proxy, for a widget that draws no check box or radio button and paints
    a lot (the session tree): every primitive a style draws goes through _Style.drawPrimitive, a
    call into Python, ~300 of them per screenful of rows. Owned by ``owner``."""
    style = QStyleFactory.create("Fusion")
    style.setParent(owner)
    return style


def apply_theme(app: QApplication, name: str = "system") -> Theme:
    """Fusion + our palette; ``name`` is light, dark or system."""
    global _current
    dark = system_prefers_dark() if name == "system" else name == "dark"
    theme = Theme(dark)
    app.setStyle(_Style("Fusion"))
    app.setPalette(theme.palette())
    _current = theme
    entry_icon.cache_clear()
    return theme


def current_theme() -> Theme:
    global _current
    if _current is None:
        _current = Theme(system_prefers_dark())
    return _current


def kind_of(rec_type: object, role: object) -> str:
    """The colour/icon kind of an entry."""
    if rec_type == "message":
        return role if isinstance(role, str) and role in ROLE_COLORS else "damaged"
    if rec_type == "compaction":
        return "compaction"
    if rec_type == "branch_summary":
        return "branchSummary"
    if rec_type == "custom_message":
        return "custom"
    if rec_type == "context_edit":  # pi 1.6.0
        return "contextEdit"
    if rec_type == "usage":  # pi 1.6.0
        return "usage"
    return "meta"


def role_color(kind: str) -> QColor:
    return current_theme().role(kind)


@lru_cache(maxsize=64)
def entry_icon(kind: str, size: int = 16) -> QIcon:
    """A small painted badge: coloured rounded square with a letter."""
    theme = current_theme()
    pm = QPixmap(size * 2, size * 2)
    pm.setDevicePixelRatio(2.0)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = theme.role(kind)
    rect = QRectF(1, 1, size - 2, size - 2)
    if kind == "meta":
        p.setPen(color)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(rect.adjusted(2, 2, -2, -2), 3, 3)
    else:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawRoundedRect(rect, 4, 4)
        f = QFont()
        f.setPixelSize(int(size * 0.62))
        f.setBold(True)
        p.setFont(f)
        p.setPen(QColor("#ffffff"))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _ICON_LETTERS.get(kind, "?"))
    p.end()
    return QIcon(pm)
