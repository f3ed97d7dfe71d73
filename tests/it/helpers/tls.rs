//! Certificates made inside the test (rcgen): a CA the clients trust and leaf
//! certificates for `localhost` and `127.0.0.1` that it signs, written as PEM files the
//! server reads; clients that trust only that CA (reqwest, and tokio-rustls for looking
//! at the certificate a handshake presented).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// A test certificate authority.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A leaf certificate and its key, as PEM, and the DER a handshake presents.
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    pub der: CertificateDer<'static>,
}

impl TestCa {
    pub fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "Anteroom test CA");
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        Self { issuer }
    }

    /// The CA certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A new leaf for `localhost` and `127.0.0.1`, with its own key; `cn` tells leaves
    /// apart.
    pub fn leaf(&self, cn: &str) -> Leaf {
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }

    /// reqwest trusting only this CA (HTTP/2 when ALPN agrees on it), no redirects.
    pub fn client(&self) -> reqwest::Client {
        self.client_builder().build().unwrap()
    }

    /// The same, HTTP/1.1 only.
    pub fn http1_client(&self) -> reqwest::Client {
        self.client_builder().http1_only().build().unwrap()
    }

    fn client_builder(&self) -> reqwest::ClientBuilder {
        let ca = reqwest::Certificate::from_pem(self.pem().as_bytes()).unwrap();
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(20))
    }

    /// A TLS connection to `127.0.0.1:port` (offering HTTP/1.1 only), verified against
    /// this CA.
    pub async fn connect(&self, port: u16) -> TlsStream<TcpStream> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.issuer.der().clone()).unwrap();
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        connector
            .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
            .await
            .expect("a TLS handshake")
    }

    /// The leaf certificate a new handshake with `127.0.0.1:port` presents.
    pub async fn presented(&self, port: u16) -> CertificateDer<'static> {
        let tls = self.connect(port).await;
        tls.get_ref().1.peer_certificates().unwrap()[0].clone()
    }
}

impl Leaf {
    /// Writes `cert.pem` and `key.pem` in `dir` (replacing them); returns their paths.
    pub fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, &self.cert_pem).unwrap();
        std::fs::write(&key, &self.key_pem).unwrap();
        (cert, key)
    }
}
