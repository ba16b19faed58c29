"""What the lifespan opens once and every request shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.agents.models import Models
from app.asking.answering import Asking
from app.asking.jobs import Jobs
from app.asking.limits import AnswerLimits
from app.config import Settings
from app.db.engine import Database
from app.documents.worker import Converter
from app.kit.addresses import AddressRules
from app.kit.secrets import SecretBox
from app.people.passwords import Hasher
from app.rag.embeddings.base import Embedder
from app.routing.state import RoutingState
from app.sessions.cookies import CookieSigner
from app.sources.sync import Syncs
from app.throttle import Throttle

if TYPE_CHECKING:
    from authlib.integrations.starlette_client import (  # type: ignore[import-untyped]  # no py.typed
        StarletteOAuth2App,
    )


@dataclass(frozen=True)
class Resources:
    settings: Settings
    db: Database
    head_revision: str | None
    embedder: Embedder
    signer: CookieSigner
    box: SecretBox
    hasher: Hasher
    # Password attempts (sign-in, sign-up, password change): per client address, and overall.
    signin_per_address: Throttle
    signin_overall: Throttle
    # The pool of file-conversion worker processes.
    converter: Converter
    # The answering agents' chat models (ANSWER_PROVIDER), and the deep research jobs this
    # process runs.
    models: Models
    jobs: Jobs
    # Each person's runs and research jobs at once, and the process's model calls at once.
    limits: AnswerLimits
    # Multi-corpus routing: the policy file's layer, the search cache, remote workspaces' client.
    routing: RoutingState
    # Where the server may connect to an address it is given (remote workspaces).
    addresses: AddressRules
    # Sources' syncs this process runs in the background (webhooks, the schedule).
    syncs: Syncs
    # The OpenID Connect provider's client; None unless OIDC is configured.
    oidc: StarletteOAuth2App | None = None

    def asking(self) -> Asking:
        """What a run needs from the process, the same for every door: each of its calls opens
        a short transaction of its own, so a run holds no connection while the model thinks."""
        return Asking(
            settings=self.settings,
            embedder=self.embedder,
            models=self.models,
            transaction=self.db.write,
            limits=self.limits,
            routing=self.routing,
        )
