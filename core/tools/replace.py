"""Replace a user's file all at once, so a failed write never leaves it half-written.

``write_file`` and ``edit_file`` used to truncate the file and then write into it: on a
full disk (or a file-size limit, or a killed process) the user's file was left holding a
prefix of the new text, and the old text was gone. Here the new bytes go to a hidden temp
file in the same folder (so the rename stays on one filesystem and is atomic), are
fsynced, and only then renamed over the target: readers — and the user after a failure —
see the old file or the new one, never a mix. The write is durable (the folder is synced
too): the user's file must survive a power cut as well as a kill.

The target keeps its permission bits (an executable script stays executable). A file the
user made read-only stays refused, as a plain ``open(..., "w")`` would refuse it: a rename
could replace it, but the user said not to. The price of renaming is that a hard link to
the old file keeps the old bytes; ctxlab's file tools already follow symlinks to their real
file before writing, so a symlink stays a symlink to the updated file.

The write is ctxlab's one atomic writer (:func:`core.archive.atomic.open_atomic`), whose
temp name stays within the folder's ``NAME_MAX``: a legal 255-byte file name plus the temp's
suffix used to be too long to create, so such a file could not be written at all.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.archive.atomic import open_atomic


def replace_file(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically, keeping an existing file's mode.

    Raises ``OSError`` (the caller turns it into a tool error); the target is then
    untouched and no temp file is left behind.
    """
    try:
        old_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        old_mode = None
    if old_mode is not None and not os.access(target, os.W_OK):
        raise PermissionError(13, "Permission denied (the file is read-only)", str(target))
    # 0o666 minus the umask is what a plain open(..., "w") would give a new file.
    with open_atomic(target, durable=True, mode=0o666) as file:
        if old_mode is not None:
            os.fchmod(file.fd, old_mode)
        file.write(data)
        file.commit(target)

