//! Single sign-on (`[admin.oidc]`): the OpenID Connect authorization-code flow with PKCE.
//!
//! 1. `GET /admin/oidc/login` reads the provider's discovery document, makes a random
//!    `state`, `nonce` and PKCE verifier, keeps them in a signed, HttpOnly cookie
//!    (`anteroom_oidc`, 10 minutes, `Path=/admin/oidc`, `SameSite=Lax` so that the
//!    provider's redirect back carries it) and sends the browser to the provider.
//! 2. `GET /admin/oidc/callback?code=…&state=…` checks `state` against the cookie,
//!    exchanges the code (with the verifier and the client secret) at the token
//!    endpoint, and verifies the ID token with `openidconnect`: signature against the
//!    provider's published keys, `iss`, `aud`, expiry and the `nonce`. The role is the
//!    highest that [`crate::config::OidcSettings::roles`] maps any value of the
//!    `roles_claim` to; a user with none is refused (403 page). Otherwise it signs the
//!    user in as `preferred_username` (else `email`, else `sub`), like a password
//!    sign-in: the dashboard's session cookie.
//!
//! The discovery document and keys are read at each sign-in (a few a day), so a
//! provider's key rotation needs nothing here, and the server starts whether or not
//! the provider is up.
//!
//! This file is the provider's side (discovery, the code exchange, the ID token, the
//! role); the two routes and their flow cookie are in [`super::sso`].

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreErrorResponseType, CoreGenderClaim, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm, CoreProviderMetadata,
    CoreResponseType, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AuthenticationFlow, AuthorizationCode, Client, ClientId, ClientSecret,
    CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet, EndpointSet, IdTokenFields,
    IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    StandardErrorResponse, StandardTokenResponse,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::roles::Principal;
use crate::config::{OidcSettings, Role};
use crate::webhook::client::WebhookClient;

/// How long one request to the provider may take.
const PROVIDER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The ID token's claims beyond the standard ones, where the roles claim is read.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct OtherClaims {
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}
impl AdditionalClaims for OtherClaims {}

type TokenResponse = StandardTokenResponse<
    IdTokenFields<
        OtherClaims,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

type OidcClient = Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    TokenResponse,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Single sign-on's settings, checked, and the HTTP client it reaches the provider with.
pub struct Oidc {
    settings: OidcSettings,
    issuer: IssuerUrl,
    redirect: RedirectUrl,
    http: WebhookClient,
}

/// Why a sign-in through the provider failed (logged; the user sees a short page).
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("the identity provider could not be reached or answered wrongly: {0}")]
    Provider(String),
    #[error("the sign-in expired or did not start here; start again")]
    Flow,
    #[error("the provider refused the sign-in: {0}")]
    Refused(String),
    #[error("the ID token is not valid: {0}")]
    IdToken(String),
    #[error("your account ({0}) has no role in this waiting room")]
    NoRole(String),
}

impl Oidc {
    pub fn new(s: &OidcSettings) -> anyhow::Result<Self> {
        Ok(Self {
            settings: s.clone(),
            issuer: IssuerUrl::new(s.issuer.clone())?,
            redirect: RedirectUrl::new(s.redirect_url.clone())?,
            http: WebhookClient::new(PROVIDER_TIMEOUT)?,
        })
    }

    /// The client, from the provider's discovery document (read now).
    async fn client(&self) -> Result<OidcClient, OidcError> {
        let http = |req| self.http.send(req);
        let meta = CoreProviderMetadata::discover_async(self.issuer.clone(), &http)
            .await
            .map_err(|e| OidcError::Provider(error_chain(&e)))?;
        Ok(OidcClient::from_provider_metadata(
            meta,
            ClientId::new(self.settings.client_id.clone()),
            self.settings
                .client_secret
                .as_ref()
                .map(|s| ClientSecret::new(s.expose().to_string())),
        )
        .set_redirect_uri(self.redirect.clone()))
    }

    /// Where to send the browser, and the flow cookie's contents (state, nonce,
    /// verifier).
    pub(super) async fn start(&self) -> Result<(String, [String; 3]), OidcError> {
        let client = self.client().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("profile".into()))
            .add_scope(Scope::new("email".into()))
            .set_pkce_challenge(challenge)
            .url();
        Ok((
            url.to_string(),
            [
                state.secret().clone(),
                nonce.secret().clone(),
                verifier.secret().clone(),
            ],
        ))
    }

    /// Exchanges `code`, verifies the ID token and maps its roles claim.
    pub(super) async fn finish(
        &self,
        code: String,
        nonce: String,
        verifier: String,
    ) -> Result<Principal, OidcError> {
        let client = self.client().await?;
        let http = |req| self.http.send(req);
        let token = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|e| OidcError::Provider(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier))
            .request_async(&http)
            .await
            .map_err(|e| OidcError::Refused(error_chain(&e)))?;
        let id_token = token
            .extra_fields()
            .id_token()
            .ok_or_else(|| OidcError::IdToken("the provider sent none".into()))?;
        let claims = id_token
            .claims(&client.id_token_verifier(), &Nonce::new(nonce))
            .map_err(|e| OidcError::IdToken(error_chain(&e)))?;
        let name = claims
            .preferred_username()
            .map(|u| u.as_str().to_string())
            .or_else(|| claims.email().map(|e| e.as_str().to_string()))
            .unwrap_or_else(|| claims.subject().as_str().to_string());
        let values = claim_values(&claims.additional_claims().rest, &self.settings.roles_claim);
        match role_for(&self.settings, &values) {
            Some(role) => Ok(Principal { name, role }),
            None => Err(OidcError::NoRole(name)),
        }
    }
}

/// The error and its causes on one line (the library's top error alone says little).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// The string values at the dotted `path` of `claims` (a string, or an array's strings).
pub fn claim_values(claims: &serde_json::Map<String, Value>, path: &str) -> Vec<String> {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else {
        return Vec::new();
    };
    let mut v = claims.get(first);
    for p in parts {
        v = v.and_then(|x| x.get(p));
    }
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The highest role any of `values` maps to.
pub fn role_for(s: &OidcSettings, values: &[String]) -> Option<Role> {
    values.iter().filter_map(|v| s.roles.get(v).copied()).max()
}
#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> OidcSettings {
        OidcSettings {
            issuer: "https://idp.example".into(),
            client_id: "a".into(),
            client_secret: None,
            redirect_url: "https://q.example/admin/oidc/callback".into(),
            roles_claim: "realm_access.roles".into(),
            roles: [("ops".into(), Role::Operator), ("boss".into(), Role::Owner)].into(),
        }
    }

    #[test]
    fn the_highest_mapped_value_of_the_claim_is_the_role() {
        let claims: serde_json::Map<String, Value> = serde_json::from_value(
            serde_json::json!({"realm_access": {"roles": ["ops", "boss", "x"]}, "groups": "ops"}),
        )
        .unwrap();
        let s = settings();
        let v = claim_values(&claims, &s.roles_claim);
        assert_eq!(role_for(&s, &v), Some(Role::Owner));
        assert_eq!(
            role_for(&s, &claim_values(&claims, "groups")),
            Some(Role::Operator)
        );
        assert_eq!(role_for(&s, &claim_values(&claims, "missing")), None);
        assert_eq!(role_for(&s, &["x".to_string()]), None);
    }
}
