//! Loading a certificate and its key from PEM files, and the resolver that serves the
//! current one to every handshake while a reload swaps it.

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::CertPaths;
use crate::config::ConfigError;

/// Reads and parses the two files: the chain (at least one certificate), a private key
/// the ring provider can sign with, and the key matching the leaf certificate. Each
/// error names the setting its file came from.
pub fn load(paths: &CertPaths) -> Result<CertifiedKey, ConfigError> {
    let invalid = |field: &str, message: String| ConfigError::Invalid {
        field: field.into(),
        message,
    };
    let cert_pem = std::fs::read(&paths.cert).map_err(|e| {
        invalid(
            paths.cert_field,
            format!("cannot read {}: {e}", paths.cert.display()),
        )
    })?;
    let key_pem = std::fs::read(&paths.key).map_err(|e| {
        invalid(
            paths.key_field,
            format!("cannot read {}: {e}", paths.key.display()),
        )
    })?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            invalid(
                paths.cert_field,
                format!("{} is not PEM: {e}", paths.cert.display()),
            )
        })?;
    if chain.is_empty() {
        return Err(invalid(
            paths.cert_field,
            format!("{} holds no CERTIFICATE block", paths.cert.display()),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        invalid(
            paths.key_field,
            format!(
                "{} holds no usable private key (PKCS#8, PKCS#1 or SEC1 PEM): {e}",
                paths.key.display()
            ),
        )
    })?;
    let signer = super::provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| {
            invalid(
                paths.key_field,
                format!("{}: unsupported private key: {e}", paths.key.display()),
            )
        })?;
    let certified = CertifiedKey::new(chain, signer);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified)
        }
        Err(e) => Err(invalid(
            paths.key_field,
            format!(
                "does not match the certificate in {}: {e}",
                paths.cert.display()
            ),
        )),
    }
}

/// One listener's certificate, swapped whole on reload. Handshakes read it through an
/// [`ArcSwap`]: no lock on the accept path, and a reload never waits for handshakes.
pub struct ReloadingCert {
    paths: CertPaths,
    current: ArcSwap<CertifiedKey>,
}

impl std::fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl ReloadingCert {
    /// Loads the files now: start-up fails on a file that does not load.
    pub fn load(paths: CertPaths) -> Result<Self, ConfigError> {
        let first = load(&paths)?;
        Ok(Self {
            paths,
            current: ArcSwap::from_pointee(first),
        })
    }

    /// Reads the files again; on success new handshakes get the new certificate. On
    /// failure the old one stays and the error is logged and returned.
    pub fn reload(&self) -> Result<(), ConfigError> {
        match load(&self.paths) {
            Ok(k) => {
                self.current.store(Arc::new(k));
                tracing::info!(cert = %self.paths.cert.display(), "TLS certificate reloaded");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "TLS certificate not reloaded; the old one is kept");
                Err(e)
            }
        }
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}
