"""Window state: geometry, window and splitter state saved and restored, the splitter fitted to
the window until the user moves it; the recent files (browser list and File menu)."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QResizeEvent, QShowEvent

from .window_parts import WindowParts

__all__ = ["WindowState"]


class WindowState(WindowParts):
    """Geometry and splitters (restored at start, saved on close, fitted until the user moves them)
    and the recent files."""

    def showEvent(self, e: QShowEvent) -> None:
        super().showEvent(e)
        if not self._sized:
            self._sized = True
            self._fit_splitter()

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        if not self._sized or self._fit_pending:
            self._fit_splitter()

    _fit_pending = True

    #: the tree's share of the splitter width until the user moves the splitter, within
    #: TREE_WIDTHS: enough for a row's preview, tokens and time, and no more in a narrow window,
    #: where the middle column (the entry, the preview's summary, before and after) needs it most
    TREE_SHARE = 0.33
    TREE_WIDTHS = (340, 700)

    def _fit_splitter(self) -> None:
        """Give the tree its share of the width (now and once the layout has settled)."""
        self._fit_now()
        QTimer.singleShot(0, self._fit_later)

    def _fit_later(self) -> None:
        if self._fit_pending:
            self._fit_now()

    def _fit_now(self) -> None:
        sw = self.splitter.width() if self.splitter.isVisible() else 0
        # the panes share what the handles leave (sizes adding up to more are cut from one pane)
        handles = self.splitter.handleWidth() * (self.splitter.count() - 1)
        w = max(800, sw if sw > 400 else self.width()) - handles
        side = max(self.planner.minimumSizeHint().width(), 320 if w < 1500 else 380)
        least, most = self.TREE_WIDTHS
        tree = min(most, max(least, int(w * self.TREE_SHARE)))
        self.splitter.setSizes([tree, max(200, w - side - tree), side])

    def _restore_state(self) -> bool:
        g = self.settings.state("geometry")
        if g is not None:
            self.restoreGeometry(g)
        for key, sp in (
            ("splitter", self.splitter),
            ("preview-splitter-v2", self.preview.splitter),
            ("browser-splitter", self.browser.splitter),
        ):
            v = self.settings.state(key)
            if v is not None:
                sp.restoreState(v)
        ws = self.settings.state("window")
        if ws is not None:
            self.restoreState(ws)
        self._fit_pending = self.settings.state("splitter") is None
        return not self._fit_pending

    def save_state(self) -> None:
        self._fit_pending = False
        self.settings.set_state("geometry", self.saveGeometry())
        self.settings.set_state("window", self.saveState())
        self.settings.set_state("splitter", self.splitter.saveState())
        self.settings.set_state("preview-splitter-v2", self.preview.splitter.saveState())
        self.settings.set_state("browser-splitter", self.browser.splitter.saveState())
        self.settings.sync()

    def _show_recent(self) -> None:
        self.browser.set_recent(self.settings.recent_files(), self.settings.recent_problems())

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        # named as the browser's Recent files names them (a session by its project and title);
        # the path is the item's tooltip and status tip
        self.recent_menu.setToolTipsVisible(True)
        for n, (p, label, _why) in enumerate(self.browser.recent_entries(), 1):
            key = f"&{n} " if n < 10 else ""
            a = self.recent_menu.addAction(key + label.replace("&", "&&"))
            a.setToolTip(p)
            a.setStatusTip(p)
            a.triggered.connect(lambda _c=False, p=p: self.open_path(p))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none)").setEnabled(False)
