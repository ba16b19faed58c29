"""The provider hands the SDK's registration to `app.oauth.service` typed as `ClientMetadata`
(a cast: the SDK's model dumped as JSON); the two must name the same fields."""

from __future__ import annotations

from mcp.shared.auth import OAuthClientInformationFull

from app.oauth.service import ClientMetadata


def test_client_metadata_names_every_field_of_the_sdk_registration() -> None:
    assert set(ClientMetadata.__annotations__) == set(OAuthClientInformationFull.model_fields)
