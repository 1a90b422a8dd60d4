"""The claims the test provider signs: username, e-mail (verified or not) and groups."""

from __future__ import annotations

from oauth2_provider.oauth2_validators import OAuth2Validator


class ClaimsValidator(OAuth2Validator):
    oidc_claim_scope = None  # every claim below goes into the id_token, whatever the scopes

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "name": user.get_full_name() or user.username,
            "email": user.email,
            # A user whose last name is "unverified" has an address the provider never checked.
            "email_verified": user.last_name != "unverified",
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
