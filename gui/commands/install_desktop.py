"""`tightfit install-desktop [--uninstall]`: put Tightfit in the desktop's application menu — a desktop entry
that starts this very install, and its icon at every size — under the user's XDG data directory
(``$XDG_DATA_HOME``, default ``~/.local/share``), or take them out again. No root, nothing outside that
folder; running it twice changes nothing the second time. Each file is named with what was done to it; a file
of the same name that it did not write (one the user edited, say) is left as it is and named, unless --force.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gui.core.words import english_error

__all__ = ["DESCRIPTION", "add_install_desktop_parser", "run_install_desktop"]

HELP = "add Tightfit to the desktop's application menu, with its icon, for this user"
DESCRIPTION = (
    "Write a desktop entry that starts this install of Tightfit, and its icon (SVG and PNG, 16 to 256 px), "
    "under $XDG_DATA_HOME (default ~/.local/share): applications/ and icons/hicolor/. Only files named "
    "after the app id are written; running it again rewrites nothing that is already up to date. A file of the "
    "same name that it did not write (one you edited) is left as it is, and named, unless --force."
)


def add_install_desktop_parser(sub: Any) -> None:
    parser = sub.add_parser("install-desktop", help=HELP, description=DESCRIPTION)
    parser.add_argument(
        "--uninstall", action="store_true", help="remove the desktop entry and icons this command writes"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace (or remove) a file of the same name even if it was edited"
    )


def run_install_desktop(args: argparse.Namespace) -> int:
    from gui.services.desktop import APP_ID, LEFT_INSTALL, LEFT_UNINSTALL, data_home, install, launcher, uninstall

    home = data_home()
    try:
        if args.uninstall:
            changes = uninstall(home, force=args.force)
        else:
            command = launcher()
            changes = install(home, command, force=args.force)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else english_error(exc)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        print(f"tightfit install-desktop: error: {reason}{where}", file=sys.stderr)
        return 1
    for change in changes:
        print(change)
    left = sum(c.action in (LEFT_INSTALL, LEFT_UNINSTALL) for c in changes)
    if args.uninstall:
        removed = sum(c.action == "removed" for c in changes)
        print(
            (f"Removed {removed} file(s) of {APP_ID} from {home}." if removed else f"Nothing of {APP_ID} in {home}.")
            + (f" Left {left} file(s) it did not write (--force removes them)." if left else "")
        )
    else:
        wrote = sum(c.action == "wrote" for c in changes)
        print(
            f"The menu entry starts: {' '.join(command)}. "
            + (f"Wrote {wrote} file(s) under {home}." if wrote else f"Everything under {home} was up to date.")
            + (f" Left {left} file(s) it did not write (--force replaces them)." if left else "")
        )
    return 0
