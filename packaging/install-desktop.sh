#!/bin/sh
# Install (or remove) Session Studio's desktop integration for the current user:
# the .desktop launcher, the hicolor icons, the AppStream metainfo and the MIME type
# for pi session files, under $XDG_DATA_HOME (default ~/.local/share).
#
#   packaging/install-desktop.sh                      # after `pip install` (session-studio on PATH)
#   packaging/install-desktop.sh --exec /opt/session-studio/session-studio   # a PyInstaller bundle
#   packaging/install-desktop.sh --data-dir /usr/local/share                 # system-wide (as root)
#   packaging/install-desktop.sh --uninstall
#
# It does not install the program itself: use pip (or pipx) or the PyInstaller bundle for that.
set -eu

APP_ID=io.github.session_studio.SessionStudio
HERE=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
ROOT=$(dirname -- "$HERE")
ICONS="$ROOT/resources/icons"
DATA_DIR=${XDG_DATA_HOME:-$HOME/.local/share}
EXEC=
MODE=install

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --exec) EXEC=${2:?--exec needs a path}; shift 2 ;;
        --exec=*) EXEC=${1#--exec=}; shift ;;
        --data-dir) DATA_DIR=${2:?--data-dir needs a folder}; shift 2 ;;
        --data-dir=*) DATA_DIR=${1#--data-dir=}; shift ;;
        --uninstall) MODE=uninstall; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install-desktop.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done

SIZES="16 24 32 48 64 128 256 512"
APPS="$DATA_DIR/applications"
HICOLOR="$DATA_DIR/icons/hicolor"
METAINFO="$DATA_DIR/metainfo"
MIME="$DATA_DIR/mime"

refresh() {
    if command -v update-mime-database >/dev/null 2>&1 && [ -d "$MIME/packages" ]; then
        update-mime-database "$MIME" >/dev/null 2>&1 || true
    fi
    if command -v update-desktop-database >/dev/null 2>&1 && [ -d "$APPS" ]; then
        update-desktop-database -q "$APPS" || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$HICOLOR/index.theme" ]; then
        gtk-update-icon-cache -q -t -f "$HICOLOR" || true
    fi
    touch "$HICOLOR" 2>/dev/null || true   # nudge icon caches that watch the folder's mtime
}

if [ "$MODE" = uninstall ]; then
    rm -f "$APPS/$APP_ID.desktop" "$METAINFO/$APP_ID.metainfo.xml" \
          "$MIME/packages/$APP_ID.mime.xml" "$HICOLOR/scalable/apps/$APP_ID.svg"
    for n in $SIZES; do rm -f "$HICOLOR/${n}x${n}/apps/$APP_ID.png"; done
    refresh
    echo "removed Session Studio's desktop integration from $DATA_DIR"
    exit 0
fi

for n in $SIZES; do
    [ -f "$ICONS/hicolor/${n}x${n}/apps/$APP_ID.png" ] || {
        echo "install-desktop.sh: missing $ICONS/hicolor/${n}x${n}/apps/$APP_ID.png" >&2; exit 1; }
done

mkdir -p "$APPS" "$METAINFO" "$MIME/packages" "$HICOLOR/scalable/apps"
for n in $SIZES; do
    mkdir -p "$HICOLOR/${n}x${n}/apps"
    cp "$ICONS/hicolor/${n}x${n}/apps/$APP_ID.png" "$HICOLOR/${n}x${n}/apps/$APP_ID.png"
done
cp "$ICONS/session-studio.svg" "$HICOLOR/scalable/apps/$APP_ID.svg"
cp "$HERE/$APP_ID.metainfo.xml" "$METAINFO/$APP_ID.metainfo.xml"
cp "$HERE/$APP_ID.mime.xml" "$MIME/packages/$APP_ID.mime.xml"

if [ -n "$EXEC" ]; then
    case "$EXEC" in /*) ;; *) EXEC="$(pwd)/$EXEC" ;; esac
    [ -x "$EXEC" ] || echo "install-desktop.sh: warning: $EXEC is not an executable file" >&2
    case "$EXEC" in
        *[!A-Za-z0-9_./+-]*)  # quote it for the Exec key, per the Desktop Entry spec
            q=$(printf '%s' "$EXEC" | sed -e 's/[\\"`$]/\\\\&/g' -e 's/%/%%/g'); exec_value="\"$q\"" ;;
        *) exec_value=$EXEC ;;
    esac
    tmp="$APPS/.$APP_ID.desktop.$$"
    SS_EXEC_VALUE=$exec_value SS_TRYEXEC=$EXEC awk '
        /^Exec=/    { print "Exec=" ENVIRON["SS_EXEC_VALUE"] " %f"; next }
        /^TryExec=/ { print "TryExec=" ENVIRON["SS_TRYEXEC"]; next }
        { print }' "$HERE/$APP_ID.desktop" > "$tmp"
    mv "$tmp" "$APPS/$APP_ID.desktop"
else
    cp "$HERE/$APP_ID.desktop" "$APPS/$APP_ID.desktop"
    command -v session-studio >/dev/null 2>&1 ||
        echo "install-desktop.sh: note: session-studio is not on PATH; the launcher needs it (or use --exec)" >&2
fi
chmod 644 "$APPS/$APP_ID.desktop"

refresh
echo "installed Session Studio's launcher, icons, metainfo and MIME type under $DATA_DIR"
