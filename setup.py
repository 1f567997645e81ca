"""Which packages the wheel holds: anoman_tui's own, and the top-level `themes/` folder.

The theme files live at the top of the repository, beside anoman_tui/, where users and
contributors look for them; they ship as the data package `anoman_tui.theme_files`,
which anoman_tui/locations.py reads through importlib.resources (from a wheel and from
an editable install alike). pyproject.toml can map a folder to a package (`package-dir`)
but cannot add that package to an automatic discovery, hence this file; everything
else about the package is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["anoman_tui", "anoman_tui.*"]),
        "anoman_tui.theme_files",
    ],
    package_dir={"anoman_tui.theme_files": "themes"},
)
