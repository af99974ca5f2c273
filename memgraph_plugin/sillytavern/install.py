"""Copy the packaged SillyTavern extension into a SillyTavern user's data folder
(``<dataRoot>/default-user``): ``extensions/memgraph-memory/``, where SillyTavern serves it as
``/scripts/extensions/third-party/memgraph-memory/``."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

#: the packaged extension (manifest.json, the module scripts, styles)
EXTENSION = Path(__file__).with_name("extension")
#: the extension's folder name under ``<user dir>/extensions/``
FOLDER = "memgraph-memory"
#: what a SillyTavern user folder holds (one of these is enough to recognise it)
USER_DIR_MARKS = ("settings.json", "chats", "characters", "extensions")

__all__ = ["EXTENSION", "FOLDER", "InstallError", "Installed", "install_extension"]


class InstallError(ValueError):
    """The folder is not usable (the message says what and where)."""


@attrs.frozen
class Installed:
    """Where the extension went and the files copied (names relative to it)."""

    target: Path
    files: tuple[str, ...]
    replaced: bool  # an earlier copy was there and has been replaced


def _packaged_files() -> list[Path]:
    files = sorted(p for p in EXTENSION.rglob("*") if p.is_file() and p.suffix != ".pyc")
    if not any(p.name == "manifest.json" for p in files):
        raise InstallError(f"the packaged extension is incomplete: no manifest.json in {EXTENSION}")
    return files


def install_extension(user_dir: Path) -> Installed:
    """Copy the extension into ``user_dir/extensions/memgraph-memory/`` (an earlier copy is
    replaced whole, so no file of an older version stays behind)."""
    user_dir = Path(user_dir).expanduser()
    if not user_dir.is_dir():
        raise InstallError(
            f"{user_dir} is not a folder: give SillyTavern's user data folder, "
            "e.g. SillyTavern/data/default-user"
        )
    if not any((user_dir / mark).exists() for mark in USER_DIR_MARKS):
        raise InstallError(
            f"{user_dir} does not look like a SillyTavern user folder (none of "
            f"{', '.join(USER_DIR_MARKS)} in it): give e.g. SillyTavern/data/default-user"
        )
    files = _packaged_files()
    target = user_dir / "extensions" / FOLDER
    staging = target.with_name(FOLDER + ".installing")
    shutil.rmtree(staging, ignore_errors=True)
    for source in files:
        destination = staging / source.relative_to(EXTENSION)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    replaced = target.exists()
    if replaced:
        shutil.rmtree(target)
    staging.rename(target)
    names = tuple(str(p.relative_to(EXTENSION)) for p in files)
    return Installed(target=target.resolve(), files=names, replaced=replaced)
