"""A zip of the kverify package for Spark executors, built from whatever this process imports.

On a cluster the executors' Python has pyspark but not necessarily kverify; Spark puts a zip
given to `SparkContext.addPyFile` on their `sys.path`. kverify's source folders (impl/, model/,
...) are mapped into `kverify.*` by the packaging (see pyproject.toml), so in an editable
install they live in separate directories: the zip re-assembles them under `kverify/` exactly as
a regular install lays them out. Only `.py` files and package data (specs, templates) go in;
caches never do. The zip's name carries a hash of its content, so a changed tree ships anew.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import tempfile
import zipfile

# The folders the packaging maps into kverify.* (pyproject.toml [tool.setuptools.package-dir]).
MAPPED_SUBPACKAGES = ("impl", "model", "invariants", "stateful_tests", "specs", "reports")
_DATA_SUFFIXES = (".py", ".tla", ".cfg", ".html", ".j2", ".md", ".css", ".json", ".txt")


def package_roots() -> list[tuple[str, str]]:
    """(directory, name inside the zip) for kverify and every mapped subpackage that lives
    outside kverify's own directory."""
    import kverify

    root = os.path.realpath(list(kverify.__path__)[0])
    roots = [(root, "kverify")]
    for sub in MAPPED_SUBPACKAGES:
        spec = importlib.util.find_spec(f"kverify.{sub}")
        if spec is None or not spec.submodule_search_locations:
            continue
        where = os.path.realpath(list(spec.submodule_search_locations)[0])
        if os.path.dirname(where) != root:
            roots.append((where, f"kverify/{sub}"))
    return roots


def build_zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for directory, arc_root in package_roots():
            for dirpath, dirnames, filenames in os.walk(directory):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
                for fn in sorted(filenames):
                    if not fn.endswith(_DATA_SUFFIXES):
                        continue
                    full = os.path.join(dirpath, fn)
                    arc = os.path.join(arc_root, os.path.relpath(full, directory)).replace(os.sep, "/")
                    info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    with open(full, "rb") as fh:
                        zf.writestr(info, fh.read())
    return buf.getvalue()


def build_zip(directory: str | None = None) -> str:
    """Write the zip (named by its content hash) into `directory`; return its path."""
    data = build_zip_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    directory = directory or os.path.join(tempfile.gettempdir(), f"kverify-ship-{os.getuid()}")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"kverify-{digest}.zip")
    if not os.path.exists(path):
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    return path
