//! The OpenAPI document at `/api/openapi.json` (`src/web/openapi.rs`): served as JSON,
//! OpenAPI 3.1, listing every route under `/api` (the list below, the routes declared
//! in `src/` and the document must agree, so a new route without its documentation
//! fails here), real answers matching their schemas, and a real validator
//! (`@apidevtools/swagger-parser`, installed by `.ci/run`) accepting it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::Method;
use serde_json::Value;

use crate::helpers::admin::{admin_app, TOKEN};
use crate::helpers::{room, Reply, TestApp};

/// Every route the app serves under `/api`, as `METHOD /path` with OpenAPI's `{name}`
/// parameters. Adding a route means adding it here and documenting it.
const API_ROUTES: &[&str] = &[
    "GET /api/openapi.json",
    "POST /api/rooms/{room}/join",
    "GET /api/rooms/{room}/status",
    "GET /api/rooms/{room}/fairness",
    "GET /api/rooms/{room}/fairness/digests",
    "POST /api/rooms/{room}/release",
    "POST /api/rooms/{room}/away",
    "GET /api/rooms/{room}/verify",
    "POST /api/rooms/{room}/revoke",
    "GET /api/rooms/{room}/challenge",
    "GET /api/rooms/{room}/embeddable",
    "GET /api/languages",
    "POST /api/rooms/{room}/health",
    "GET /api/admin/rooms",
    "GET /api/admin/rooms/{room}",
    "PUT /api/admin/rooms/{room}",
    "DELETE /api/admin/rooms/{room}",
    "POST /api/admin/rooms/{room}/{action}",
    "POST /api/admin/rooms/{room}/stock",
    "GET /api/admin/rooms/{room}/visitors",
    "DELETE /api/admin/rooms/{room}/visitors/{id}",
    "POST /api/admin/rooms/{room}/flush",
    "GET /api/admin/rooms/{room}/audit",
    "GET /api/admin/audit",
    "GET /api/admin/rooms/{room}/webhook/dead-letters",
    "POST /api/admin/rooms/{room}/webhook/dead-letters/replay",
    "POST /api/admin/rooms/{room}/webhook/dead-letters/{event_id}/replay",
];

/// The routes outside `/api` the document describes too.
const OTHER_ROUTES: &[&str] = &[
    "GET /healthz",
    "GET /readyz",
    "GET /metrics",
    "GET /.well-known/jwks.json",
];

/// The validator's release (`.ci/run` reads this line to install it).
pub const SWAGGER_PARSER_VERSION: &str = "13.1.0";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

async fn fetch_document(app: &TestApp) -> (reqwest::header::HeaderMap, Value) {
    let res = app
        .client
        .get(app.url("/api/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let headers = res.headers().clone();
    let doc = serde_json::from_str(&res.text().await.unwrap()).expect("the document parses");
    (headers, doc)
}

/// `METHOD /path` of every operation in the document.
fn operations(doc: &Value) -> BTreeSet<String> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            ops.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    ops
}

fn set(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn the_document_is_served_as_json_and_is_openapi_3_1() {
    let (app, _redis) = admin_app(vec![]).await;

    let (headers, doc) = fetch_document(&app).await;

    assert_eq!(headers["content-type"], "application/json");
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1."),
        "{}",
        doc["openapi"]
    );
    assert_eq!(doc["info"]["title"], "Anteroom");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
}

/// The list above, the routes declared in the source and the document agree.
#[tokio::test]
async fn every_route_under_api_is_documented() {
    let (app, _redis) = admin_app(vec![]).await;
    let (_, doc) = fetch_document(&app).await;

    let documented = operations(&doc);
    let under_api: BTreeSet<String> = documented
        .iter()
        .filter(|op| op.contains(" /api/"))
        .cloned()
        .collect();
    assert_eq!(under_api, set(API_ROUTES), "documented routes under /api");
    let others: BTreeSet<String> = documented.difference(&under_api).cloned().collect();
    assert_eq!(others, set(OTHER_ROUTES), "documented routes outside /api");

    let declared = declared_api_routes(&repo().join("src"));
    assert_eq!(
        declared,
        set(API_ROUTES),
        "routes declared under /api in src/ (add a new one to API_ROUTES and document it \
         with #[utoipa::path])"
    );
}

/// Every listed route is really served: none falls through to the catch-all `404`.
#[tokio::test]
async fn every_listed_route_is_served() {
    let (app, _redis) = admin_app(vec![room("demo", 5)]).await;

    for op in API_ROUTES {
        let (method, path) = op.split_once(' ').unwrap();
        let path = path
            .replace("{room}", "demo")
            .replace("{action}", "pause")
            .replace("{id}", "0123456789abcdef0123456789abcdef");
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = app
            .client
            .request(method, app.url(&path))
            .bearer_auth(TOKEN);
        if op.starts_with("PUT") || op.ends_with("/stock") {
            req = req.json(&serde_json::json!({}));
        }
        let reply = Reply::from(req.send().await.unwrap()).await;
        let message = reply.body["error"]["message"].as_str().unwrap_or("");
        assert!(
            !message.starts_with("nothing at"),
            "{op}: not served ({} {})",
            reply.status,
            reply.body
        );
    }
}

/// Every error answer in the document is the one error shape (or the shape plus
/// members), and the three credentials have their schemes.
#[tokio::test]
async fn errors_and_credentials_are_described() {
    let (app, _redis) = admin_app(vec![]).await;
    let (_, doc) = fetch_document(&app).await;

    let error_body = &doc["components"]["schemas"]["ErrorBody"];
    assert_eq!(
        error_body["properties"]["error"]["$ref"],
        "#/components/schemas/ErrorDetail"
    );
    let detail = &doc["components"]["schemas"]["ErrorDetail"];
    assert_eq!(detail["required"], serde_json::json!(["code", "message"]));
    assert!(detail["properties"]["field"].is_object());

    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                let status: u16 = status.parse().unwrap();
                if status < 400 || path == "/readyz" {
                    continue; // readyz's 503 is its own Readiness body
                }
                let schema = &response["content"]["application/json"]["schema"]["$ref"];
                let name = schema.as_str().unwrap_or_default().rsplit('/').next();
                let name = name.unwrap_or_default();
                let error = &doc["components"]["schemas"][name]["properties"]["error"]["$ref"];
                assert_eq!(
                    error, "#/components/schemas/ErrorDetail",
                    "{method} {path} {status}: {response}"
                );
                assert!(
                    response["description"].as_str().unwrap().contains('`'),
                    "{method} {path} {status} names its codes"
                );
            }
        }
    }

    let schemes = &doc["components"]["securitySchemes"];
    for name in ["visitor_token", "pass", "admin_token"] {
        assert_eq!(schemes[name]["type"], "http", "{name}");
        assert_eq!(schemes[name]["scheme"], "bearer", "{name}");
    }
    assert_eq!(schemes["visitor_cookie"]["name"], "anteroom_vid");
    let security = |m: &str, p: &str| doc["paths"][p][m]["security"].to_string();
    assert!(security("get", "/api/rooms/{room}/status").contains("visitor_token"));
    assert!(security("get", "/api/rooms/{room}/verify").contains("\"pass\""));
    assert!(security("put", "/api/admin/rooms/{room}").contains("admin_token"));
}

/// Every admin route that changes something documents `403 forbidden_role` (a viewer's
/// change, an operator's secret…), and no route that only reads does: the shared lists
/// in `src/web/admin/responses.rs`.
#[tokio::test]
async fn admin_write_routes_document_forbidden_role() {
    let (app, _redis) = admin_app(vec![]).await;
    let (_, doc) = fetch_document(&app).await;
    let mut writes = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.starts_with("/api/admin/") {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            let forbidden = op["responses"]["403"]["description"].as_str();
            let forbidden = forbidden.unwrap_or_else(|| panic!("{method} {path} has a 403"));
            if method == "get" {
                assert!(!forbidden.contains("forbidden_role"), "{method} {path}");
            } else {
                writes += 1;
                assert!(
                    forbidden.contains("`forbidden_role`"),
                    "{method} {path}: {forbidden}"
                );
            }
        }
    }
    assert!(writes >= 5, "{writes} admin write routes found");
}

/// Real answers have exactly the members their schemas name (top level): the document
/// describes what the handlers send.
#[tokio::test]
async fn real_answers_match_their_schemas() {
    let (app, _redis) = admin_app(vec![room("demo", 1)]).await;
    let (_, doc) = fetch_document(&app).await;
    let get = |path: &str| {
        let req = app.client.get(app.url(path)).bearer_auth(TOKEN);
        async move { Reply::from(req.send().await.unwrap()).await }
    };

    let joined = Reply::from(
        app.client
            .post(app.url("/api/rooms/demo/join"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(joined.status, 200);
    assert_matches(&doc, "VisitorView", &joined.body);
    let pass = joined.body["pass"].as_str().unwrap();
    let verified = Reply::from(
        app.client
            .get(app.url("/api/rooms/demo/verify"))
            .bearer_auth(pass)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_matches(&doc, "Claims", &verified.body);

    let unknown = get("/api/rooms/nope/challenge").await;
    assert_eq!(unknown.status, 404);
    assert_matches(&doc, "ErrorBody", &unknown.body);
    assert_matches(&doc, "ErrorDetail", &unknown.body["error"]);
    let invalid = Reply::from(
        app.client
            .post(app.url("/api/admin/rooms/demo/stock"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"add": 0}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(invalid.status, 400);
    assert_matches(&doc, "ErrorDetail", &invalid.body["error"]);
    assert_eq!(invalid.body["error"]["field"], "stock");

    assert_matches(&doc, "RoomDetail", &get("/api/admin/rooms/demo").await.body);
    assert_matches(&doc, "Overview", &get("/api/admin/rooms").await.body);
    assert_matches(&doc, "Readiness", &get("/readyz").await.body);
    assert_matches(&doc, "Health", &get("/healthz").await.body);
    assert_matches(&doc, "Jwks", &get("/.well-known/jwks.json").await.body);
}

/// `value`'s members are the schema's properties, and it has every required one.
fn assert_matches(doc: &Value, schema: &str, value: &Value) {
    let s = &doc["components"]["schemas"][schema];
    let properties: BTreeSet<&String> = s["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{schema} has properties"))
        .keys()
        .collect();
    let members: BTreeSet<&String> = value
        .as_object()
        .unwrap_or_else(|| panic!("{schema}: not an object: {value}"))
        .keys()
        .collect();
    assert!(
        members.is_subset(&properties),
        "{schema}: members {members:?} not in {properties:?}"
    );
    for required in s["required"].as_array().into_iter().flatten() {
        let required = required.as_str().unwrap();
        assert!(
            value.get(required).is_some(),
            "{schema}: `{required}` missing from {value}"
        );
    }
}

/// `@apidevtools/swagger-parser` validates the document against the OpenAPI 3.1 schema
/// and resolves every `$ref`. In CI (`CI=true`) it must be installed (`.ci/run` does);
/// elsewhere the test says how to install it and passes.
#[tokio::test]
async fn the_document_passes_a_real_validator() {
    let dir = repo().join("target/openapi-validator");
    let module = dir.join("node_modules/@apidevtools/swagger-parser");
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !module.join("package.json").exists() {
        let install = format!(
            "npm install --prefix target/openapi-validator \
             @apidevtools/swagger-parser@{SWAGGER_PARSER_VERSION}"
        );
        assert!(
            !in_ci,
            "the OpenAPI validator is missing in CI: .ci/run installs it ({install})"
        );
        eprintln!("SKIPPED the_document_passes_a_real_validator: not in CI and the validator is not installed; run `{install}` (or .ci/run)");
        return;
    }
    let (app, _redis) = admin_app(vec![]).await;
    let (_, doc) = fetch_document(&app).await;
    let file = tempfile::NamedTempFile::with_suffix(".json").unwrap();
    std::fs::write(file.path(), doc.to_string()).unwrap();

    let out = validate(&module, file.path());

    assert!(
        out.status.success(),
        "swagger-parser refused the document:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "valid 3.1.0");
}

fn validate(module: &Path, file: &Path) -> std::process::Output {
    const SCRIPT: &str = "const [module, file] = process.argv.slice(1);
        require(module).validate(file).then(
            api => console.log('valid', api.openapi),
            err => { console.error(err.message); process.exit(1); });";
    Command::new("node")
        .args(["-e", SCRIPT])
        .arg(module)
        .arg(file)
        .output()
        .expect("node runs (apt-get install nodejs)")
}

/// `METHOD /path` of every actix route attribute (`#[get("/api/…")]`) and `.route("/api…"`
/// under `dir`, with `{name:regex}` written `{name}`.
fn declared_api_routes(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(declared_api_routes(&path));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().map(str::trim) {
            for method in ["get", "post", "put", "delete", "patch", "head"] {
                let Some(rest) = line.strip_prefix(&format!("#[{method}(\"")) else {
                    continue;
                };
                let route = rest.split('"').next().unwrap();
                if route == "/api" || route.starts_with("/api/") {
                    found.insert(format!("{} {}", method.to_uppercase(), openapi_path(route)));
                }
            }
            assert!(
                !line.contains(".route(\"/api") && !line.contains("resource(\"/api"),
                "{}: a route under /api registered by hand; declare it with an attribute \
                 and #[utoipa::path]: {line}",
                path.display()
            );
        }
    }
    found
}

/// `/a/{room}/{action:pause|resume}` → `/a/{room}/{action}`.
fn openapi_path(route: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    let mut skipping = false;
    for c in route.chars() {
        match c {
            '{' => in_param = true,
            '}' => {
                in_param = false;
                skipping = false;
            }
            ':' if in_param => skipping = true,
            _ if skipping => continue,
            _ => {}
        }
        if !skipping || c == '}' {
            out.push(c);
        }
    }
    out
}
