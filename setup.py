"""Lists kverify's subpackages: every folder with an __init__.py below the mapped root folders.

pyproject.toml maps the root folders (impl/, model/, ...) onto `kverify.*`; setuptools cannot
discover packages through such a mapping by itself, so this walks the folders once at build time.
"""
import os
import tomllib

from setuptools import setup

with open(os.path.join(os.path.dirname(__file__) or ".", "pyproject.toml"), "rb") as fh:
    PACKAGE_DIR = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]


def _packages():
    found = []
    for package, folder in PACKAGE_DIR.items():
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            if "__init__.py" in files:
                rel = os.path.relpath(root, folder)
                found.append(package if rel == "." else package + "." + rel.replace(os.sep, "."))
    return sorted(found)


setup(packages=_packages())
