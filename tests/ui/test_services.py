"""The app provides everything screens use of it through `ui/services.py`."""

from __future__ import annotations

import inspect

from anoman_tui.config import Settings
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.services import AppServices, app_services


def test_anoman_app_provides_every_service() -> None:
    app = AnomanApp(Settings(), connect=False)
    services = app_services(app)
    assert services is app
    for name in AppServices.__annotations__:
        assert hasattr(app, name), f"AnomanApp lacks {name}, which screens use"
    for name, member in vars(AppServices).items():
        if inspect.iscoroutinefunction(member):
            assert inspect.iscoroutinefunction(getattr(app, name)), name
            assert (inspect.signature(getattr(AnomanApp, name)).parameters.keys()
                    == inspect.signature(member).parameters.keys()), name
