"""Sphinx extension: keep sphinx-thebe out of the pages (the book has no launch buttons).

Jupyter Book 1.x always loads sphinx_thebe, even with `launch_buttons: thebe: false`, and
sphinx-thebe 0.3.1 then puts on every page

- its configuration script twice, so `const THEBE_JS_URL` is declared twice: a SyntaxError in
  every reader's browser console;
- a Binder configuration naming a placeholder repository (binder-examples/
  jupyter-stacks-datascience) and a script URL on unpkg.com;
- sphinx-thebe.js and .css, which only serve the launch button the book does not have.

This extension loads sphinx_thebe first, then disconnects all its event handlers and drops its
stylesheet, so none of that reaches the site. It refuses to build if thebe is switched on.
"""

from __future__ import annotations

from sphinx.errors import ExtensionError

THEBE = "sphinx_thebe"


def _refuse_thebe(app) -> None:
    launch = (app.config.html_theme_options or {}).get("launch_buttons") or {}
    if launch.get("thebe"):
        raise ExtensionError(
            "launch_buttons.thebe is on, but _ext/no_thebe.py switches sphinx-thebe off: remove "
            "no_thebe from `local_extensions` in _config.yml to use thebe"
        )


def setup(app):
    app.setup_extension(THEBE)  # make sure its handlers exist before they are removed
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "") == THEBE:
                app.disconnect(listener.id)
    app.registry.css_files = [
        (name, attributes)
        for name, attributes in app.registry.css_files
        if name != "sphinx-thebe.css"
    ]
    app.connect("builder-inited", _refuse_thebe)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
