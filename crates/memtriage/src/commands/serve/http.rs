//! The HTTP side of `serve`, on hyper: `/metrics`, `/` and nothing else, read-only.
//! Every connection is bounded: headers at most 16 KiB (431), a request head must
//! arrive within [`HEAD_TIMEOUT`] (408), an idle keep-alive connection is closed,
//! TLS handshakes time out, and past [`MAX_CONNECTIONS`] a new client gets 503 at
//! once, so one slow or hostile client cannot stall the others.

use std::collections::HashSet;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use memtriage_core::usecase::watch::Watcher;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::web_config::WebConfig;
use crate::render::metrics::{self, Format};

pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
pub const MAX_CONNECTIONS: usize = 256;
const MAX_HEADER_BYTES: usize = 16 << 10;
/// Successful logins remembered, so bcrypt (tens of ms by design) runs once per
/// client rather than once per scrape.
const AUTH_CACHE: usize = 64;

pub struct Server {
    pub watcher: Watcher,
    /// How `--record` goes, where it was asked for.
    pub record: Option<std::sync::Arc<memtriage_core::usecase::record::RecordStatus>>,
    pub web: WebConfig,
    /// Credentials bcrypt accepted, as digests ([`credential_digest`]): a scrape every
    /// 15 s must not cost a bcrypt each, and no password is kept in memory.
    pub auth_cache: Mutex<HashSet<[u8; 32]>>,
    /// A bcrypt hash an unknown user's password is checked against, so the time an
    /// answer takes does not tell which users exist.
    pub dummy_hash: String,
    /// bcrypt checks running at once: each is tens of milliseconds of CPU by design,
    /// and a client without the password must not get a core's worth of them.
    pub bcrypt_slots: Semaphore,
}

pub async fn serve(listener: TcpListener, server: Arc<Server>) -> anyhow::Result<()> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(c) => c,
            // Out of descriptors, or the client left before accept: wait, go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tokio::spawn(refuse(stream, server.web.tls.is_none()));
            continue;
        };
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            connection(stream, peer, server).await;
            drop(slot);
        });
    }
}

/// Past the connection limit: a plain-HTTP client is told so; a TLS one is closed.
async fn refuse(stream: TcpStream, plain: bool) {
    if plain {
        if let Ok(std) = stream.into_std() {
            let _ = (&std).write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
                  Content-Length: 22\r\nConnection: close\r\nRetry-After: 1\r\n\r\n\
                  too many connections\r\n",
            );
        }
    }
}

async fn connection(stream: TcpStream, _peer: SocketAddr, server: Arc<Server>) {
    let _ = stream.set_nodelay(true);
    // A second handle on the socket, to answer 408 to a client too slow to send a
    // request head and to close idle ones: hyper owns the first.
    let Ok(std) = stream.into_std() else { return };
    let Ok(watchdog_socket) = std.try_clone() else {
        return;
    };
    let Ok(stream) = TcpStream::from_std(std) else {
        return;
    };
    let requests = Arc::new(AtomicU64::new(0));
    let plain = server.web.tls.is_none();

    let served = {
        let requests = Arc::clone(&requests);
        let tls = server.web.tls.clone();
        async move {
            let service = hyper::service::service_fn(move |req| {
                requests.fetch_add(1, Ordering::Relaxed);
                let server = Arc::clone(&server);
                async move { Ok::<_, Infallible>(respond(&server, req).await) }
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.max_buf_size(MAX_HEADER_BYTES.max(8192))
                .keep_alive(true)
                .half_close(false);
            match &tls {
                None => {
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                }
                Some(tls) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::clone(tls));
                    let Ok(Ok(tls_stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    let _ = http
                        .serve_connection(TokioIo::new(tls_stream), service)
                        .await;
                }
            }
        }
    };
    tokio::pin!(served);
    let mut seen = 0;
    let mut wait = HEAD_TIMEOUT;
    loop {
        tokio::select! {
            _ = &mut served => return,
            _ = tokio::time::sleep(wait) => {
                let now = requests.load(Ordering::Relaxed);
                if now != seen {
                    seen = now;
                    wait = IDLE_TIMEOUT;
                    continue;
                }
                if now == 0 && plain {
                    let _ = (&watchdog_socket).write_all(
                        b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain\r\n\
                          Content-Length: 37\r\nConnection: close\r\n\r\n\
                          no complete request head within 10s\r\n",
                    );
                }
                let _ = watchdog_socket.shutdown(std::net::Shutdown::Both);
                // hyper sees the closed socket and ends; give it a moment.
                let _ = tokio::time::timeout(Duration::from_secs(1), &mut served).await;
                return;
            }
        }
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

async fn respond(server: &Server, req: Request<Incoming>) -> Reply {
    if !server.web.users.is_empty() && !authorized(server, &req).await {
        let mut r = reply(StatusCode::UNAUTHORIZED, "text/plain", "Unauthorized\n");
        r.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"memtriage\""),
        );
        return r;
    }
    let get = matches!(*req.method(), Method::GET | Method::HEAD);
    match req.uri().path() {
        "/metrics" if get => {
            let format = Format::negotiate(req.headers().get(ACCEPT).and_then(|v| v.to_str().ok()));
            match metrics::encode(
                server.watcher.view(),
                server.record.as_deref().map(|r| metrics::RecordFigures {
                    paused: r.paused.load(std::sync::atomic::Ordering::Relaxed),
                    intervals: r.intervals.load(std::sync::atomic::Ordering::Relaxed),
                }),
                format,
                SystemTime::now(),
            ) {
                Ok(text) => reply(StatusCode::OK, format.content_type(), text),
                Err(_) => reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain",
                    "the metrics could not be encoded\n",
                ),
            }
        }
        "/" if get => reply(StatusCode::OK, "text/html; charset=utf-8", INDEX),
        "/" | "/metrics" => {
            let mut r = reply(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "read-only: GET or HEAD\n",
            );
            r.headers_mut()
                .insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            r
        }
        _ => reply(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: memtriage serves /metrics and /\n",
        ),
    }
}

async fn authorized(server: &Server, req: &Request<Incoming>) -> bool {
    let Some((user, password)) = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            s.split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
        })
    else {
        return false;
    };
    let key = credential_digest(&user, &password);
    if server.auth_cache.lock().is_ok_and(|c| c.contains(&key)) {
        return true;
    }
    let hash = server
        .web
        .users
        .get(&user)
        .cloned()
        .unwrap_or_else(|| server.dummy_hash.clone());
    let known = server.web.users.contains_key(&user);
    let Ok(_slot) = server.bcrypt_slots.acquire().await else {
        return false;
    };
    let ok = tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
        .await
        .unwrap_or(false)
        && known;
    if ok {
        if let Ok(mut cache) = server.auth_cache.lock() {
            if cache.len() >= AUTH_CACHE {
                cache.clear();
            }
            cache.insert(key);
        }
    }
    ok
}

const INDEX: &str = "<!doctype html><html><head><title>memtriage serve</title></head><body>\
<h1>memtriage serve</h1>\
<p>A Prometheus exporter of this machine's memory: process groups (RSS, PSS, USS, swap, \
faults), memory cgroups and their OOM kills (attributed to pod, container, Slurm job or unit), \
pressure, /dev/shm, huge pages, page cache of watched files, GPUs, and doctor's findings.</p>\
<p><a href=\"/metrics\">/metrics</a> (Prometheus text; OpenMetrics when asked). \
Read-only: nothing here changes the machine.</p></body></html>\n";

/// SHA-256 of a user and password, the user's length first so that no two pairs
/// hash the same text: what the login cache keys.
fn credential_digest(user: &str, password: &str) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(&(user.len() as u64).to_le_bytes());
    ctx.update(user.as_bytes());
    ctx.update(password.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::credential_digest;

    #[test]
    fn credentials_that_concatenate_alike_have_different_digests() {
        assert_eq!(
            credential_digest("prom", "pw"),
            credential_digest("prom", "pw")
        );
        assert_ne!(
            credential_digest("prom", "pw"),
            credential_digest("pro", "mpw")
        );
        assert_ne!(credential_digest("a", "\0b"), credential_digest("a\0", "b"));
    }
}
