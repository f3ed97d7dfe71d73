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

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
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

use super::auth::{new_session_cookie, AdminAuth, Principal, SOURCE_OIDC};
use crate::config::{OidcSettings, Role};
use crate::domain::admission::Engine;
use crate::domain::identity::constant_time_eq;
use crate::webhook::client::WebhookClient;

const FLOW_COOKIE: &str = "anteroom_oidc";
const FLOW_DOMAIN: &str = "admin-oidc-flow";
/// How long a sign-in at the provider may take.
const FLOW_SECS: u64 = 600;
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
    async fn start(&self) -> Result<(String, [String; 3]), OidcError> {
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
    async fn finish(
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

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(login).service(callback);
}

fn flow_cookie(engine: &Engine, value: String, max_age: i64) -> Cookie<'static> {
    Cookie::build(FLOW_COOKIE, value)
        .path("/admin/oidc")
        .http_only(true)
        .secure(engine.secure_cookies())
        // Lax, not Strict: the provider's redirect back is a cross-site navigation,
        // which must carry this cookie.
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::seconds(max_age))
        .finish()
}

/// A short page saying why single sign-on did not work.
fn refused(status: StatusCode, message: &str) -> HttpResponse {
    super::pages::message_page(status, "Single sign-on failed", message)
}

/// `GET /admin/oidc/login`: off to the provider.
#[get("/admin/oidc/login")]
async fn login(engine: web::Data<Engine>, auth: Option<web::Data<AdminAuth>>) -> HttpResponse {
    let Some(oidc) = auth.as_ref().and_then(|a| a.oidc.as_ref()) else {
        return HttpResponse::NotFound().body("single sign-on is not configured");
    };
    match oidc.start().await {
        Ok((url, [state, nonce, verifier])) => {
            let expires = jsonwebtoken::get_current_timestamp() + FLOW_SECS;
            let body = format!("{expires}.{state}.{nonce}.{verifier}");
            let value = format!("{body}.{}", engine.visitors().tag(FLOW_DOMAIN, &body));
            HttpResponse::SeeOther()
                .insert_header(("Location", url))
                .insert_header(("Cache-Control", "no-store"))
                .cookie(flow_cookie(&engine, value, FLOW_SECS as i64))
                .finish()
        }
        Err(e) => {
            tracing::warn!(error = %e, "single sign-on could not start");
            refused(StatusCode::BAD_GATEWAY, &e.to_string())
        }
    }
}

#[derive(Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// The flow cookie's state, nonce and verifier, if it is ours and unexpired.
fn read_flow(req: &HttpRequest, engine: &Engine) -> Option<(String, String, String)> {
    let c = req.cookie(FLOW_COOKIE)?;
    let (body, tag) = c.value().rsplit_once('.')?;
    if !engine.visitors().check_tag(FLOW_DOMAIN, body, tag) {
        return None;
    }
    let mut p = body.split('.');
    let expires: u64 = p.next()?.parse().ok()?;
    let (state, nonce, verifier) = (p.next()?, p.next()?, p.next()?);
    (p.next().is_none() && expires > jsonwebtoken::get_current_timestamp())
        .then(|| (state.into(), nonce.into(), verifier.into()))
}

/// `GET /admin/oidc/callback`: the provider's answer.
#[get("/admin/oidc/callback")]
async fn callback(
    req: HttpRequest,
    q: web::Query<Callback>,
    engine: web::Data<Engine>,
    auth: Option<web::Data<AdminAuth>>,
) -> HttpResponse {
    let Some(auth) = auth else {
        return HttpResponse::NotFound().body("the admin interface is disabled");
    };
    let Some(oidc) = auth.oidc.as_ref() else {
        return HttpResponse::NotFound().body("single sign-on is not configured");
    };
    let ip = crate::web::support::client_ip(&req, &engine);
    let q = q.into_inner();
    let outcome = async {
        let (state, nonce, verifier) = read_flow(&req, &engine).ok_or(OidcError::Flow)?;
        if let Some(e) = q.error {
            return Err(OidcError::Refused(match q.error_description {
                Some(d) => format!("{e}: {d}"),
                None => e,
            }));
        }
        let sent = q.state.unwrap_or_default();
        if !constant_time_eq(sent.as_bytes(), state.as_bytes()) {
            return Err(OidcError::Flow);
        }
        let code = q.code.filter(|c| !c.is_empty()).ok_or(OidcError::Flow)?;
        oidc.finish(code, nonce, verifier).await
    }
    .await;
    let mut res = match outcome {
        Ok(who) => {
            tracing::info!(user = %who.name, role = who.role.as_str(), "admin signed in (single sign-on)");
            HttpResponse::SeeOther()
                .insert_header(("Location", "/admin"))
                .insert_header(("Cache-Control", "no-store"))
                .cookie(new_session_cookie(&engine, &auth, SOURCE_OIDC, &who))
                .finish()
        }
        Err(e) => {
            tracing::warn!(%ip, error = %e, "single sign-on refused");
            let status = match e {
                OidcError::Provider(_) => StatusCode::BAD_GATEWAY,
                OidcError::Flow => StatusCode::BAD_REQUEST,
                _ => StatusCode::FORBIDDEN,
            };
            refused(status, &e.to_string())
        }
    };
    // The flow is over either way: its cookie goes.
    let _ = res.add_removal_cookie(&flow_cookie(&engine, String::new(), 0));
    res
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
