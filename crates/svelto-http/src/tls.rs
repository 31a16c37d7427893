//! `https://`: TLS with rustls (ring's primitives; TLS 1.2 and 1.3), from a PEM certificate
//! chain and private key (`--http-tls-cert`, `--http-tls-key`), read at start and again on
//! [`crate::HttpServer::reload_tls`] (SIGHUP), so a renewed certificate is served to new
//! connections without a restart. A reload that fails keeps the certificate in use.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// Where the certificate chain and its key are.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// PEM: the server's certificate first, then the intermediates.
    pub cert: PathBuf,
    /// PEM: the private key (PKCS#8, PKCS#1 RSA or SEC1 EC).
    pub key: PathBuf,
}

/// The configuration new connections are accepted with.
pub(crate) struct Tls {
    files: TlsFiles,
    current: RwLock<Arc<ServerConfig>>,
}

fn server_config(files: &TlsFiles) -> Result<ServerConfig, String> {
    let cert_pem = std::fs::read(&files.cert).map_err(|e| {
        format!(
            "cannot read the certificate '{}': {e}",
            files.cert.display()
        )
    })?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("'{}' is not a PEM certificate: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "'{}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            files.cert.display()
        ));
    }
    let key_pem = std::fs::read(&files.key)
        .map_err(|e| format!("cannot read the private key '{}': {e}", files.key.display()))?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        format!(
            "'{}' holds no PEM private key (PKCS#8, RSA or EC): {e}",
            files.key.display()
        )
    })?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            format!(
                "the certificate '{}' and the key '{}' do not go together: {e}",
                files.cert.display(),
                files.key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

impl Tls {
    pub fn load(files: TlsFiles) -> Result<Tls, String> {
        let config = server_config(&files)?;
        Ok(Tls {
            files,
            current: RwLock::new(Arc::new(config)),
        })
    }

    /// Reads the files again; new connections get the new certificate.
    pub fn reload(&self) -> Result<(), String> {
        let config = Arc::new(server_config(&self.files)?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = config;
        Ok(())
    }

    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}
