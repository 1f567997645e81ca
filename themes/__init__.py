"""The bundled theme files, shipped as the data package `anoman_tui.theme_files`.

This file makes the folder a regular package: setuptools' editable install finds a
package mapped to a folder elsewhere (setup.py) only when it has an `__init__.py`.
"""
