//! `--web-config FILE`: the Prometheus exporter-toolkit's web configuration, so
//! `serve` is secured the way every exporter of a fleet already is: TLS
//! (`tls_server_config`) and basic auth with bcrypt hashes (`basic_auth_users`).
//! Unknown keys are errors, as in exporter-toolkit: a typo must not leave an
//! exporter open.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use tokio_rustls::rustls;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsFile>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
    /// Accepted for compatibility (files written for node_exporter have it); HTTP/2
    /// is not served and headers are fixed, so it is not read.
    #[serde(default, rename = "http_server_config")]
    _http_server_config: Option<serde_yaml_ng::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: PathBuf,
    key_file: PathBuf,
    #[serde(default)]
    client_auth_type: Option<String>,
    #[serde(default)]
    client_ca_file: Option<PathBuf>,
    #[serde(default)]
    min_version: Option<String>,
    #[serde(default)]
    max_version: Option<String>,
}

/// What the web configuration asks for.
pub struct WebConfig {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// User → bcrypt hash; empty: no authentication.
    pub users: BTreeMap<String, String>,
}

impl WebConfig {
    pub fn none() -> Self {
        WebConfig {
            tls: None,
            users: BTreeMap::new(),
        }
    }

    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the web config", path.display()))?;
        let file: File = if text.trim().is_empty() {
            File::default()
        } else {
            serde_yaml_ng::from_str(&text).map_err(|e| {
                anyhow!(
                    "{}: not a valid web config ({e}); see \
                     https://prometheus.io/docs/prometheus/latest/configuration/https/",
                    path.display()
                )
            })?
        };
        let base = path.parent().unwrap_or(Path::new("."));
        for (user, hash) in &file.basic_auth_users {
            hash.parse::<bcrypt::HashParts>().map_err(|e| {
                anyhow!(
                    "{}: basic_auth_users.{user} is not a bcrypt hash ({e}); make one with \
                     `htpasswd -nbBC 10 \"\" PASSWORD | tr -d ':\\n'`",
                    path.display()
                )
            })?;
        }
        let tls = file
            .tls_server_config
            .map(|t| tls_config(&t, base, path))
            .transpose()?;
        Ok(WebConfig {
            tls,
            users: file.basic_auth_users,
        })
    }
}

fn tls_config(
    t: &TlsFile,
    base: &Path,
    config: &Path,
) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let resolve = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        }
    };
    let cert_path = resolve(&t.cert_file);
    let key_path = resolve(&t.key_file);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow!("{}: cannot read the certificate: {e}", cert_path.display()))?;
    if certs.is_empty() {
        bail!("{}: no PEM certificate in it", cert_path.display());
    }
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| anyhow!("{}: cannot read the private key: {e}", key_path.display()))?;
    let version = |v: &Option<String>, default: &'static rustls::SupportedProtocolVersion| match v
        .as_deref()
    {
        None => Ok(default),
        Some("TLS12") => Ok(&rustls::version::TLS12),
        Some("TLS13") => Ok(&rustls::version::TLS13),
        Some(other) => Err(anyhow!(
            "{}: tls_server_config version {other:?} is not supported (TLS12 or TLS13)",
            config.display()
        )),
    };
    let min = version(&t.min_version, &rustls::version::TLS12)?;
    let max = version(&t.max_version, &rustls::version::TLS13)?;
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [&rustls::version::TLS12, &rustls::version::TLS13]
            .into_iter()
            .filter(|v| {
                !(std::ptr::eq(*v, &rustls::version::TLS13)
                    && std::ptr::eq(max, &rustls::version::TLS12))
            })
            .filter(|v| {
                !(std::ptr::eq(*v, &rustls::version::TLS12)
                    && std::ptr::eq(min, &rustls::version::TLS13))
            })
            .collect();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| anyhow!("{}: {e}", config.display()))?;
    let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let builder = match auth {
        "NoClientCert" => builder.with_no_client_auth(),
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let ca = t.client_ca_file.as_ref().ok_or_else(|| {
                anyhow!(
                    "{}: client_auth_type {auth} needs client_ca_file",
                    config.display()
                )
            })?;
            let ca = resolve(ca);
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(&ca)
                .map_err(|e| anyhow!("{}: cannot read the client CA: {e}", ca.display()))?
            {
                let cert = cert.map_err(|e| anyhow!("{}: {e}", ca.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| anyhow!("{}: {e}", ca.display()))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            );
            let verifier = if auth == "VerifyClientCertIfGiven" {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| anyhow!("{}: {e}", ca.display()))?,
            )
        }
        other => bail!(
            "{}: client_auth_type {other:?} is not supported (NoClientCert, \
             VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
            config.display()
        ),
    };
    let mut server = builder.with_single_cert(certs, key).map_err(|e| {
        anyhow!(
            "{}: the certificate and key do not make a TLS server: {e}",
            cert_path.display()
        )
    })?;
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(server))
}

#[cfg(test)]
mod tests {
    use super::WebConfig;

    #[test]
    fn a_node_exporter_file_with_http_server_config_loads_and_a_typo_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.yml");
        std::fs::write(&path, "http_server_config:\n  http2: false\n").unwrap();
        let config = WebConfig::load(&path).unwrap();
        assert!(config.tls.is_none() && config.users.is_empty());
        std::fs::write(&path, "http_server_configs: {}\n").unwrap();
        let err = WebConfig::load(&path).err().unwrap().to_string();
        assert!(err.contains("not a valid web config"), "{err}");
    }
}
