"""Running Alembic from the application: `corpus migrate`, `corpus serve`, readiness, tests."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from app.config import Settings

# The checkout (or the image's working folder) holds alembic.ini next to the `app` package.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(settings: Settings, url: str) -> Config:
    """Alembic's configuration for `url`, carrying the settings the migrations read."""
    ini = PROJECT_ROOT / "alembic.ini"
    if not ini.exists():
        ini = Path.cwd() / "alembic.ini"
    config = Config(str(ini))
    config.attributes["settings"] = settings
    config.attributes["url"] = url
    return config


def upgrade(settings: Settings, url: str, revision: str = "head") -> None:
    """Migrate to `revision`. Blocking: Alembic's env runs its own event loop, so call this from
    synchronous code or a worker thread."""
    command.upgrade(alembic_config(settings, url), revision)


def downgrade(settings: Settings, url: str, revision: str) -> None:
    command.downgrade(alembic_config(settings, url), revision)


def head_revision(settings: Settings) -> str | None:
    """The newest revision in alembic/versions."""
    script = ScriptDirectory.from_config(alembic_config(settings, ""))
    return script.get_current_head()
