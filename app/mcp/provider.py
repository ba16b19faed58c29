"""Our authorization server behind the MCP SDK's OAuth routes: an adapter from the SDK's
`OAuthAuthorizationServerProvider` protocol to `app.oauth.service` (the rules) and
`app.auth.service` (who a credential belongs to). Each call runs in a transaction of its own,
since the SDK's handlers are not requests of ours. It is part of the MCP door: only the SDK
calls it.

`load_access_token` is also where `/mcp` resolves our `ck_` API keys: an `MCPServer` takes an
authorization server or a separate token verifier, not both.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, cast

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl, ConfigDict

from app.access.principal import Principal
from app.auth import service as auth_service
from app.auth.tokens import API_KEY_PREFIX
from app.db.engine import Database
from app.errors import ValidationFailed
from app.kit.secrets import SecretBox
from app.logs import note_caller
from app.oauth import service as oauth
from app.oauth.documents import ClientDocuments, DocumentRefused, is_document_url


class OAuthStore(Protocol):
    """What the provider works with: the database and the box that seals clients' secrets
    (the app's `Resources` is one)."""

    @property
    def db(self) -> Database: ...

    @property
    def box(self) -> SecretBox: ...


class RegisteredClient(OAuthClientInformationFull):
    """A client as the SDK's handlers see it, with our redirect URI rule (`oauth.
    redirect_uri_allowed`): the SDK compares redirect URIs exactly, so a loopback one with
    another port (RFC 8252 §7.3) would be refused."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(uri) for uri in self.redirect_uris or []]
        if redirect_uri is not None and oauth.redirect_uri_allowed(str(redirect_uri), registered):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class CallerToken(AccessToken):
    """An access token, or an API key, with the person or agent behind it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    principal: Principal


def _oauth_token(issued: oauth.IssuedTokens) -> OAuthToken:
    return OAuthToken(
        access_token=issued.access_token,
        expires_in=issued.expires_in,
        scope=" ".join(issued.scopes),
        refresh_token=issued.refresh_token,
    )


def _timestamp(value: datetime) -> int:
    return int(value.timestamp())


class CorpusAuthProvider(
    OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, CallerToken]
):
    """The SDK's provider protocol over our tables. `store` is read per call: the pool and the
    secret box are opened by the app's lifespan, after this object is made."""

    def __init__(
        self,
        store: Callable[[], OAuthStore],
        *,
        issuer: str,
        resource: str,
        documents: ClientDocuments,
    ) -> None:
        self._store = store
        self._documents = documents  # clients whose client_id is a metadata document's URL
        self.issuer = issuer
        self.resource = resource  # the /mcp URL every token is bound to

    # --- clients ----------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        store = self._store()
        if is_document_url(client_id):
            # Fetched before the transaction: no connection is held while a stranger's server
            # answers. `OAuthEdges` has answered a refusal at /authorize with its reason.
            try:
                document = await oauth.document_client(self._documents, client_id)
            except DocumentRefused:
                return None
            async with store.db.write() as conn:
                await oauth.remember_document_client(conn, document)
            return RegisteredClient.model_validate(document)
        # On the primary: a client registers and at once sends its first request.
        async with store.db.read_primary() as conn:
            metadata = await oauth.get_client(conn, store.box, client_id)
        return RegisteredClient.model_validate(metadata) if metadata else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        store = self._store()
        # The SDK's model dumped as JSON is exactly what ClientMetadata describes.
        metadata = cast(
            oauth.ClientMetadata, client_info.model_dump(mode="json", exclude_none=True)
        )
        try:
            async with store.db.write() as conn:
                await oauth.register_client(conn, store.box, metadata, client_info.client_secret)
        except oauth.InvalidClientMetadata as exc:
            raise RegistrationError("invalid_client_metadata", str(exc)) from None
        except oauth.InvalidRedirectUri as exc:
            raise RegistrationError("invalid_redirect_uri", str(exc)) from None

    # --- authorization ----------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        # RFC 8707: we are one resource; a token asked for another would be useless here and
        # dangerous elsewhere.
        if params.resource is not None and params.resource.rstrip("/") != self.resource:
            raise AuthorizeError("invalid_target", f"this server issues tokens for {self.resource}")
        assert client.client_id is not None
        async with self._store().db.write() as conn:
            tx = await oauth.begin_authorization(
                conn,
                client.client_id,
                {
                    "state": params.state,
                    "scopes": params.scopes or [oauth.SCOPE],
                    "code_challenge": params.code_challenge,
                    "redirect_uri": str(params.redirect_uri),
                    "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
                    "resource": self.resource,
                },
            )
        return f"{self.issuer}{oauth.CONSENT_PATH}?tx={tx}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        assert client.client_id is not None
        # A write: presenting a spent code revokes what it issued, and that must stick even
        # though the reply is an error.
        async with self._store().db.write() as conn:
            row = await oauth.load_code(conn, client.client_id, authorization_code)
        if row is None:
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=list(row.scopes),
            expires_at=row.expires_at.timestamp(),
            client_id=row.client_id,
            code_challenge=row.code_challenge,
            redirect_uri=AnyUrl(row.redirect_uri),
            redirect_uri_provided_explicitly=row.redirect_uri_provided_explicitly,
            resource=row.resource,
            subject=str(row.user_id),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        assert client.client_id is not None
        async with self._store().db.write() as conn:
            try:
                issued = await oauth.exchange_code(conn, client.client_id, authorization_code.code)
            except oauth.InvalidGrant as exc:
                refusal = exc  # committed: the code is spent either way
            else:
                return _oauth_token(issued)
        raise TokenError("invalid_grant", str(refusal))

    # --- refresh ----------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        assert client.client_id is not None
        # A write: presenting a spent refresh token revokes its family, and that must stick
        # even though the reply is an error.
        async with self._store().db.write() as conn:
            row = await oauth.load_refresh_token(conn, client.client_id, refresh_token)
        if row is None:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=row.client_id,
            scopes=list(row.scopes),
            expires_at=_timestamp(row.expires_at),
            resource=row.resource,
            subject=str(row.user_id),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        assert client.client_id is not None
        try:
            async with self._store().db.write() as conn:
                try:
                    issued = await oauth.rotate_refresh_token(
                        conn, client.client_id, refresh_token.token, scopes
                    )
                except oauth.InvalidGrant as exc:
                    # Committed, not rolled back: when a concurrent refresh spent the token
                    # first, its family was just revoked, and that must stick.
                    refusal = exc
                else:
                    return _oauth_token(issued)
        except ValidationFailed as exc:
            # Rolled back: widening the scope must not spend the token.
            raise TokenError("invalid_scope", exc.message) from None
        raise TokenError("invalid_grant", str(refusal))

    # --- access -----------------------------------------------------------------------------

    async def load_access_token(self, token: str) -> CallerToken | None:
        db = self._store().db
        if token.startswith(API_KEY_PREFIX):
            principal = await auth_service.principal_from_api_key(db.lookup, db.write, token)
        else:
            principal = await auth_service.principal_from_access_token(
                db.lookup, db.write, token, resource=self.resource
            )
        if principal is None:
            return None
        note_caller(principal.user_id, principal.kind, principal.credential)
        return CallerToken(
            token=token,
            client_id=principal.client_id or "api-key",
            scopes=[oauth.SCOPE],
            resource=self.resource,
            subject=str(principal.user_id),
            principal=principal,
        )

    async def revoke_token(self, token: CallerToken | RefreshToken) -> None:
        if isinstance(token, CallerToken) and token.principal.credential == "api_key":
            return  # API keys are revoked by admins, not through OAuth
        async with self._store().db.write() as conn:
            await oauth.revoke(conn, token.token)
