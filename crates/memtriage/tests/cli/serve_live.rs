//! `memtriage serve` against the real things: a real Prometheus scraping it on
//! loopback and queried through its HTTP API, a real OOM kill in a memory cgroup,
//! promtool on the exposition and on the alert rules, curl and Prometheus over TLS
//! with basic auth, and clients that misbehave.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::gpu_nvml::{h100, Gpus};
use crate::support::{have, memtriage, root_or_skip, skip, wait_until, MemoryCgroup, ShellJob};

const MIB: u64 = 1 << 20;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running `memtriage serve` on a free loopback port.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(args: &[&str], env: impl FnOnce(&mut Command)) -> Serve {
        let mut c = memtriage();
        c.args(["serve", "--listen", "127.0.0.1:0", "--interval", "1s"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        env(&mut c);
        let mut child = c.spawn().expect("start memtriage serve");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("serve said {line:?}"))
            .to_string();
        Serve { child, addr }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .output()
        .expect("run curl")
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A real Prometheus server with one scrape job, its data in a temporary directory.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(scrape: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{scrape}"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus");
        let p = Prometheus {
            child,
            port,
            _dir: dir,
        };
        assert!(
            wait_until(Duration::from_secs(30), Duration::from_millis(200), || {
                curl(&[&format!("http://127.0.0.1:{port}/-/ready")])
                    .status
                    .success()
            }),
            "prometheus did not become ready"
        );
        p
    }

    /// The instant vector of `expr`: each series' labels and value.
    fn query(&self, expr: &str) -> Vec<(Value, f64)> {
        let out = curl(&[
            "-G",
            &format!("http://127.0.0.1:{}/api/v1/query", self.port),
            "--data-urlencode",
            &format!("query={expr}"),
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        v["data"]["result"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|s| {
                        let value = s["value"][1]
                            .as_str()
                            .unwrap_or("nan")
                            .parse()
                            .unwrap_or(f64::NAN);
                        (s["metric"].clone(), value)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits (up to 60 s) for `expr` to return a series; its labels and value.
    fn wait_for(&self, expr: &str) -> (Value, f64) {
        let mut found = None;
        wait_until(Duration::from_secs(60), Duration::from_millis(500), || {
            found = self.query(expr).into_iter().next();
            found.is_some()
        });
        found.unwrap_or_else(|| panic!("prometheus never had {expr}"))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn series_names(exposition: &str) -> Vec<String> {
    let mut names: Vec<String> = exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn prometheus_scrapes_a_jobs_pss_and_an_oom_kill_with_its_cgroup() {
    if !root_or_skip("an OOM kill in a memory cgroup and the kernel log need root") {
        return;
    }
    if !have("prometheus") || !have("promtool") || !have("curl") {
        return;
    }
    // A job the test started under a shell: 96 MiB of its own; and a GPU holder.
    let job = ShellJob::start("anon 96");
    let job_pid = job.pid();
    let mut gpus = Gpus::new(
        &json!({"devices": [h100(json!([{"comm": "gpu-holder", "used": 10u64 << 30}]))]}),
    );
    gpus.start("gpu-holder");
    let scratch = tempfile::tempdir().unwrap();
    let model = scratch.path().join("model.safetensors");
    let header = br#"{"w":{"dtype":"F32","shape":[1024],"data_offsets":[0,4096]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend(std::iter::repeat_n(0u8, 4096));
    std::fs::write(&model, &bytes).unwrap();
    let model_arg = model.display().to_string();

    let serve = Serve::start(&["--watch-file", &model_arg, "--watch-tensors"], |c| {
        gpus.env(c)
    });
    let prometheus = Prometheus::start(&format!(
        "  - job_name: memtriage\n    static_configs:\n      - targets: ['{}']\n",
        serve.addr
    ));

    let group = format!("memtriage-testh[{job_pid}]");
    let (_, pss) = prometheus.wait_for(&format!("memtriage_group_pss_bytes{{group=\"{group}\"}}"));
    assert!(
        pss >= (96 * MIB) as f64 && pss <= (140 * MIB) as f64,
        "PSS of the job: {} MiB, expected its 96 MiB and its binary",
        pss / MIB as f64
    );

    // An OOM kill in a cgroup the test made, after serve started.
    let cgroup = MemoryCgroup::new(
        // Named as `run --limit` names its cgroups: doctor then knows a kill in it was
        // made on purpose, and other tests' doctor runs do not report it as the
        // machine's.
        &format!("memtriage-run-serve-test-{}", std::process::id()),
        48 * MIB,
    );
    let status = cgroup.run_helper(400);
    assert!(
        !status.success(),
        "the helper should have been OOM-killed: {status:?}"
    );
    let (labels, kills) = prometheus.wait_for(&format!(
        "memtriage_oom_kills_total{{cgroup=\"{}\"}}",
        cgroup.path
    ));
    assert_eq!(kills, 1.0, "{labels}");
    let counted_at = Instant::now();
    assert_eq!(labels["victim"], "memtriage-testh", "{labels}");
    assert_eq!(labels["killer"], "kernel", "{labels}");
    assert_eq!(
        labels["source"], "both",
        "the kernel log and the cgroup's counter both saw it: {labels}"
    );
    let (_, anon) = prometheus.wait_for(&format!(
        "memtriage_oom_kill_victim_anon_rss_bytes{{cgroup=\"{}\"}}",
        cgroup.path
    ));
    assert!(
        anon >= (16 * MIB) as f64 && anon <= (48 * MIB) as f64,
        "anon-rss at the kill: {anon}"
    );
    drop(job);

    // A process living in the limited cgroup: the cgroup is exported with its limit
    // and the kill its own counter saw. It sleeps long (each wait below
    // may take up to a minute on a busy machine) and is killed at the end.
    let mut dweller = Command::new("sh")
        .args([
            "-c",
            &format!(
                "echo $$ > {}/cgroup.procs && exec sleep 600",
                cgroup.dir.display()
            ),
        ])
        .spawn()
        .unwrap();
    let (_, limit) = prometheus.wait_for(&format!(
        "memtriage_cgroup_memory_limit_bytes{{cgroup=\"{}\"}}",
        cgroup.path
    ));
    assert_eq!(limit, (48 * MIB) as f64);
    // The series lived on from before the kill (the job was in the cgroup): wait for
    // a scrape of a sample taken after it, not the last one before.
    let (_, counted) = prometheus.wait_for(&format!(
        "memtriage_cgroup_oom_events_total{{cgroup=\"{}\",event=\"oom_kill\"}} > 0",
        cgroup.path
    ));
    assert_eq!(counted, 1.0);

    // The exposition is valid, and the fleet kit uses only metrics it has.
    let exposition = curl(&[&serve.url("/metrics")]);
    assert!(exposition.status.success());
    let text = String::from_utf8(exposition.stdout).unwrap();
    promtool_check_metrics(&text);
    let names = series_names(&text);
    // A cgroup is exported while a process lives in it.
    let dweller_ended = dweller.try_wait().ok().flatten();
    for name in [
        "memtriage_group_gpu_memory_bytes",
        "memtriage_gpu_memory_total_bytes",
        "memtriage_tensor_cached_bytes",
        "memtriage_file_cached_bytes",
        "memtriage_cgroup_memory_limit_bytes",
        "memtriage_oom_kill_last_timestamp_seconds",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from the exposition (the cgroup's dweller ended: {dweller_ended:?})"
        );
    }
    let saved = scratch.path().join("exposition.txt");
    std::fs::write(&saved, &text).unwrap();
    let kit = Command::new("python3")
        .arg(repo().join("deploy/check_kit.py"))
        .arg("--exposition")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        kit.status.success(),
        "the dashboard or rules name metrics serve does not export: {}{}",
        String::from_utf8_lossy(&kit.stdout),
        String::from_utf8_lossy(&kit.stderr)
    );
    let _ = dweller.kill();
    let _ = dweller.wait();

    // Counted once: past the wait for a second source, no source counted it alone.
    std::thread::sleep(
        (counted_at + Duration::from_secs(9)).saturating_duration_since(Instant::now()),
    );
    let all = prometheus.query(&format!(
        "memtriage_oom_kills_total{{cgroup=\"{}\"}}",
        cgroup.path
    ));
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].1, 1.0, "{all:?}");
}

#[test]
fn alert_rules_pass_promtool_and_their_unit_tests() {
    if !have("promtool") {
        return;
    }
    let dir = repo().join("deploy/prometheus");
    let check = Command::new("promtool")
        .args(["check", "rules", "memtriage-rules.yml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let test = Command::new("promtool")
        .args(["test", "rules", "memtriage-rules.test.yml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
}

/// A certificate for 127.0.0.1 and a web config with one bcrypt user.
fn tls_and_auth(dir: &Path) -> PathBuf {
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl could not make a certificate");
    let hash = Command::new("python3")
        .args([
            "-W",
            "ignore",
            "-c",
            "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH)))",
        ])
        .output()
        .unwrap();
    let hash = String::from_utf8(hash.stdout).unwrap().trim().to_string();
    assert!(
        hash.starts_with("$2"),
        "no bcrypt from python's crypt: {hash:?}"
    );
    let config = dir.join("web.yml");
    std::fs::write(
        &config,
        format!(
            "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  scraper: '{hash}'\n"
        ),
    )
    .unwrap();
    config
}

#[test]
fn tls_and_basic_auth_admit_curl_and_prometheus_with_the_password_only() {
    if !have("openssl") || !have("curl") || !have("prometheus") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = tls_and_auth(dir.path());
    let serve = Serve::start(
        &["--web-config", &config.display().to_string(), "--no-doctor"],
        |_| {},
    );
    let url = format!("https://{}/metrics", serve.addr);
    let ca = dir.path().join("cert.pem").display().to_string();
    let code = |extra: &[&str]| {
        let mut args = vec!["-o", "/dev/null", "-w", "%{http_code}", "--cacert", &ca];
        args.extend_from_slice(extra);
        args.push(&url);
        String::from_utf8(curl(&args).stdout).unwrap()
    };
    assert_eq!(code(&["-u", "scraper:s3cret"]), "200");
    assert_eq!(code(&["-u", "scraper:wrong"]), "401");
    assert_eq!(code(&["-u", "nobody:s3cret"]), "401");
    assert_eq!(code(&[]), "401");
    let plain = curl(&[&format!("http://{}/metrics", serve.addr)]);
    assert!(
        !String::from_utf8_lossy(&plain.stdout).contains("memtriage_"),
        "plain HTTP must not be served on a TLS port"
    );

    let prometheus = Prometheus::start(&format!(
        "  - job_name: memtriage\n    scheme: https\n    tls_config:\n      ca_file: {ca}\n    basic_auth:\n      username: scraper\n      password: s3cret\n    static_configs:\n      - targets: ['{}']\n  - job_name: wrong-password\n    scheme: https\n    tls_config:\n      ca_file: {ca}\n    basic_auth:\n      username: scraper\n      password: nope\n    static_configs:\n      - targets: ['{}']\n",
        serve.addr, serve.addr
    ));
    let (_, up) = prometheus.wait_for("up{job=\"memtriage\"} == 1");
    assert_eq!(up, 1.0);
    prometheus.wait_for("memtriage_build_info{job=\"memtriage\"}");
    let (_, refused) = prometheus.wait_for("up{job=\"wrong-password\"}");
    assert_eq!(refused, 0.0, "a scrape with the wrong password must fail");
}

/// Sends raw bytes and reads the reply's status line (empty when the server closed
/// without one), and how long it took.
fn raw(addr: &str, request: &[u8], pause: Option<Duration>) -> (String, Duration) {
    let began = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    match pause {
        None => {
            let _ = s.write_all(request);
        }
        Some(each) => {
            for b in request {
                if s.write_all(&[*b]).is_err() {
                    break;
                }
                // Stop trickling once the server has answered and closed.
                let mut peek = [0u8; 1];
                s.set_nonblocking(true).unwrap();
                let answered = matches!(s.peek(&mut peek), Ok(n) if n > 0)
                    || matches!(s.peek(&mut peek), Ok(0));
                s.set_nonblocking(false).unwrap();
                if answered {
                    break;
                }
                std::thread::sleep(each);
            }
        }
    }
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply);
    (
        text.lines().next().unwrap_or("").to_string(),
        began.elapsed(),
    )
}

#[test]
fn bad_clients_get_clean_errors_and_the_exporter_keeps_serving() {
    if !have("curl") {
        return;
    }
    let serve = Serve::start(&["--no-doctor"], |_| {});
    let addr = serve.addr.clone();
    let ok = |what: &str| {
        let out = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("http://{addr}/metrics"),
        ]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "after {what}");
    };
    ok("start");
    let code = |args: &[&str]| {
        String::from_utf8(curl(&[&["-o", "/dev/null", "-w", "%{http_code}"], args].concat()).stdout)
            .unwrap()
    };
    assert_eq!(code(&[&serve.url("/nope")]), "404");
    assert_eq!(code(&["-X", "POST", &serve.url("/metrics")]), "405");
    assert_eq!(code(&[&serve.url("/")]), "200");

    // Prometheus' text format by default; OpenMetrics when the scraper asks.
    let head = |extra: &[&str]| {
        let out = curl(
            &[
                &["-D", "-", "-o", "/dev/null"],
                extra,
                &[serve.url("/metrics").as_str()],
            ]
            .concat(),
        );
        String::from_utf8_lossy(&out.stdout).to_lowercase()
    };
    assert!(
        head(&[]).contains("content-type: text/plain; version=0.0.4"),
        "{}",
        head(&[])
    );
    let om = head(&[
        "-H",
        "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
    ]);
    assert!(
        om.contains("content-type: application/openmetrics-text"),
        "{om}"
    );
    let body = curl(&[
        "-H",
        "Accept: application/openmetrics-text;version=1.0.0",
        &serve.url("/metrics"),
    ]);
    assert!(String::from_utf8_lossy(&body.stdout)
        .trim_end()
        .ends_with("# EOF"));

    let huge = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(64 << 10)
    );
    let (status, _) = raw(&addr, huge.as_bytes(), None);
    assert!(status.contains(" 431 "), "huge headers: {status:?}");
    let (status, _) = raw(&addr, b"\x16\x03\x01 not http at all\r\n\r\n", None);
    assert!(status.contains(" 400 "), "garbage: {status:?}");
    ok("bad requests");

    // One byte a second: answered 408 within the head timeout, while others are served.
    let slow_addr = addr.clone();
    let slow = std::thread::spawn(move || {
        raw(
            &slow_addr,
            b"GET /metrics HTTP/1.1\r\nHost: slow\r\n\r\n",
            Some(Duration::from_secs(1)),
        )
    });
    std::thread::sleep(Duration::from_secs(2));
    let began = Instant::now();
    ok("a slow client connected");
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "a slow client stalled others"
    );
    let (status, took) = slow.join().unwrap();
    assert!(status.contains(" 408 "), "slow client: {status:?}");
    assert!(
        took < Duration::from_secs(15),
        "slow client answered after {took:?}"
    );

    // Many idle connections: past the limit, new ones are refused at once, and once
    // they go the exporter serves again.
    let idle: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let (status, took) = raw(&addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", None);
    assert!(
        status.contains(" 503 "),
        "past the connection limit: {status:?}"
    );
    assert!(took < Duration::from_secs(2), "refusal took {took:?}");
    drop(idle);
    assert!(
        wait_until(Duration::from_secs(5), Duration::from_millis(100), || {
            String::from_utf8_lossy(
                &curl(&[
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    &serve.url("/metrics"),
                ])
                .stdout,
            ) == "200"
        }),
        "the exporter did not recover after the connections closed"
    );
}

#[test]
fn a_busy_address_and_a_bad_web_config_are_clear_errors() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = memtriage()
        .args(["serve", "--listen", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("web.yml");
    std::fs::write(&bad, "basic_auth_users:\n  alice: plaintext\n").unwrap();
    let out = memtriage()
        .args(["serve", "--web-config", &bad.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a bcrypt hash"), "{err}");
    std::fs::write(
        &bad,
        "tls_server_config:\n  cert_file: nope.pem\n  key_file: nope.key\n  typo: 1\n",
    )
    .unwrap();
    let out = memtriage()
        .args(["serve", "--web-config", &bad.display().to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a valid web config") && err.contains("typo"),
        "{err}"
    );
    let out = memtriage()
        .args(["serve", "--group", "x=("])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular expression"));
}

#[test]
fn as_nobody_what_serve_cannot_read_is_absent_never_zero() {
    if !root_or_skip("running serve as another user needs root") {
        return;
    }
    if !have("curl") {
        return;
    }
    let serve = Serve::start(&["--no-doctor"], |c| {
        use std::os::unix::process::CommandExt;
        c.uid(65534).gid(65534);
    });
    let mut text = String::new();
    wait_until(Duration::from_secs(20), Duration::from_millis(300), || {
        text = String::from_utf8_lossy(&curl(&[&serve.url("/metrics")]).stdout).into_owned();
        text.contains("memtriage_group_pss_coverage_ratio")
    });
    let value = |line: &str| line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok());
    let unread: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("memtriage_group_pss_coverage_ratio{") && value(l) == Some(0.0))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    assert!(
        !unread.is_empty(),
        "root's processes should be unreadable to nobody:\n{text}"
    );
    for group in unread {
        for family in [
            "memtriage_group_pss_bytes",
            "memtriage_group_uss_bytes",
            "memtriage_group_swap_bytes",
        ] {
            let series = format!("{family}{{group=\"{group}\"}}");
            assert!(
                !text.contains(&series),
                "{series} written though nothing was read:\n{text}"
            );
        }
    }
    // Issue 28, defect 9: PSS was "up" while every other user's group had none.
    assert!(
        text.contains("memtriage_source_up{source=\"pss\"} 0"),
        "nobody cannot read other users' PSS, and says so:\n{text}"
    );
    if std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict").is_ok_and(|v| v.trim() == "1") {
        assert!(
            text.contains("memtriage_source_up{source=\"kernel_log\"} 0"),
            "nobody cannot read the kernel log here, and says so:\n{text}"
        );
    }
}

/// `serve --record`: the exporter keeps the history on its own sampler, exports how
/// recording goes, and `why` reads what it wrote.
#[test]
fn serve_records_the_history_beside_the_exporter() {
    if !have("curl") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let db_arg = db.display().to_string();
    let serve = Serve::start(&["--record", &db_arg, "--no-doctor"], |_| {});
    let written = |text: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix("memtriage_record_intervals_total "))
            .and_then(|v| v.trim().parse().ok())
    };
    let mut last = String::new();
    let recorded = wait_until(Duration::from_secs(30), Duration::from_millis(300), || {
        last = String::from_utf8_lossy(&curl(&[&serve.url("/metrics")]).stdout).into_owned();
        written(&last).is_some_and(|n| n >= 2)
    });
    assert!(recorded, "{last}");
    assert!(last.contains("memtriage_record_paused 0"), "{last}");
    let why = memtriage()
        .args(["why", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        why.status.success(),
        "{}",
        String::from_utf8_lossy(&why.stderr)
    );
    let report: Value = serde_json::from_slice(&why.stdout).unwrap();
    assert_eq!(report["death"], Value::Null);
    assert!(report["record"]["last_ms"].as_i64().is_some(), "{report:#}");
}

/// `serve --record` onto a disk that fills: `memtriage_record_paused` goes to 1 while
/// nothing can be written and back to 0 when space returns; the exporter serves on.
#[test]
fn serve_exports_a_paused_recording_while_the_disk_is_full() {
    if !root_or_skip("mounting a small tmpfs needs root") {
        return;
    }
    if !have("curl") {
        return;
    }
    let disk = crate::support::SmallTmpfs::mount("4m");
    let db = disk.path().join("history.db");
    let db_arg = db.display().to_string();
    let serve = Serve::start(&["--record", &db_arg, "--no-doctor"], |_| {});
    let metrics = || String::from_utf8_lossy(&curl(&[&serve.url("/metrics")]).stdout).into_owned();
    let mut last = String::new();
    let mut until = |what: &str, done: &dyn Fn(&str) -> bool| {
        let ok = wait_until(Duration::from_secs(30), Duration::from_millis(300), || {
            last = metrics();
            done(&last)
        });
        assert!(ok, "{what}:\n{last}");
    };
    until("two intervals written", &|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("memtriage_record_intervals_total "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n >= 2)
    });
    let filler = disk.fill();
    until("recording paused on a full disk", &|t| {
        t.contains("memtriage_record_paused 1")
    });
    std::fs::remove_file(&filler).unwrap();
    until("recording resumed", &|t| {
        t.contains("memtriage_record_paused 0")
    });
}

/// `promtool check metrics` on an exposition: valid, and no lint.
pub(crate) fn promtool_check_metrics(text: &str) {
    let check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(
        check.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The line `serve` writes after the one with its address, or nothing: it starts with
/// `args`, says where it listens, and is stopped.
fn second_line(args: &[&str]) -> String {
    let mut child = memtriage()
        .args(["serve", "--interval", "1s", "--no-doctor"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("/metrics"), "{first}");
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    child.wait().unwrap();
    rest.lines().next().unwrap_or("").to_string()
}

/// Issue 28, defect 9: `serve --listen 0.0.0.0:…` with no `--web-config` served every
/// command line of the machine over open HTTP without a word. It warns when it listens
/// beyond loopback without TLS and a password; on loopback, or with both, it does not.
#[test]
fn regression_serving_beyond_loopback_without_tls_or_auth_is_warned() {
    let open = second_line(&["--listen", "0.0.0.0:0"]);
    assert!(
        open.contains("warning: listening on 0.0.0.0:")
            && open.contains("neither TLS nor basic auth"),
        "{open}"
    );
    let local = second_line(&["--listen", "127.0.0.1:0"]);
    assert!(!local.contains("warning"), "{local}");
    if !have("openssl") {
        skip("openssl is not installed (.ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = tls_and_auth(dir.path());
    let guarded = second_line(&[
        "--listen",
        "0.0.0.0:0",
        "--web-config",
        config.to_str().unwrap(),
    ]);
    assert!(!guarded.contains("warning"), "{guarded}");
}
