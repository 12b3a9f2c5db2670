//! `memtriage serve` as the deployment kit runs it: the systemd unit and the
//! Kubernetes DaemonSet verify and their own command lines serve, and an exposition
//! captured on a real H100 passes promtool with every family documented.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::serve_live::{curl, free_port, promtool_check_metrics};
use crate::support::{have, memtriage, wait_until};

/// Starts `memtriage ARGS` (a deployment's own command line) and waits for its
/// `/metrics`; the exposition.
fn serves_metrics(args: &[String], url: &str) -> String {
    let mut child = memtriage()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut text = String::new();
    let up = wait_until(Duration::from_secs(20), Duration::from_millis(200), || {
        text = String::from_utf8_lossy(&curl(&[url]).stdout).into_owned();
        text.contains("memtriage_")
    });
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(
        up,
        "memtriage {args:?} did not serve {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The kit's systemd unit verifies, and its command line serves.
#[test]
fn the_serve_systemd_unit_verifies_and_its_command_serves() {
    if !have("curl") {
        return;
    }
    let unit_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/systemd/memtriage-serve.service"),
    )
    .unwrap()
    .replace("/usr/local/bin/memtriage", crate::support::BIN);
    crate::support::systemd_verify("memtriage-serve.service", &unit_text);
    let exec = unit_text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("an ExecStart line");
    let port = free_port();
    let args: Vec<String> = exec
        .split_whitespace()
        .skip(1)
        .map(|a| a.replace("127.0.0.1:9947", &format!("127.0.0.1:{port}")))
        .collect();
    assert_eq!(args.first().map(String::as_str), Some("serve"), "{exec}");
    serves_metrics(&args, &format!("http://127.0.0.1:{port}/metrics"));
}

/// The kit's DaemonSet: every mount has its volume, the pod sees the host's processes,
/// and the container's arguments, with the Secret's web config, serve.
#[test]
fn the_daemonsets_arguments_and_web_config_serve() {
    use serde::Deserialize;
    if !have("curl") {
        return;
    }
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy/kubernetes/memtriage-daemonset.yaml"),
    )
    .unwrap();
    let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde_yaml_ng::Value::deserialize(d).unwrap())
        .filter(|d| !d.is_null())
        .collect();
    let kind = |k: &str| {
        docs.iter()
            .find(|d| d["kind"].as_str() == Some(k))
            .unwrap_or_else(|| panic!("no {k} in the manifest"))
    };
    for k in ["Secret", "DaemonSet", "Service", "ServiceMonitor"] {
        kind(k);
    }
    let pod = &kind("DaemonSet")["spec"]["template"]["spec"];
    assert_eq!(
        pod["hostPID"].as_bool(),
        Some(true),
        "it must see every process"
    );
    let container = &pod["containers"][0];
    let volumes: Vec<&str> = pod["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for m in container["volumeMounts"].as_sequence().unwrap() {
        let name = m["name"].as_str().unwrap();
        assert!(volumes.contains(&name), "mount {name} has no volume");
        assert_eq!(
            m["readOnly"].as_bool(),
            Some(true),
            "mount {name} is writable"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let web_config = dir.path().join("web-config.yml");
    std::fs::write(
        &web_config,
        kind("Secret")["stringData"]["web-config.yml"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let port = free_port();
    let args: Vec<String> = container["args"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            match a.split_once('=') {
                Some(("--listen", _)) => format!("--listen=127.0.0.1:{port}"),
                Some(("--web-config", _)) => format!("--web-config={}", web_config.display()),
                _ => a.to_string(),
            }
        })
        .collect();
    assert_eq!(args.first().map(String::as_str), Some("serve"));
    let exposition = serves_metrics(&args, &format!("http://127.0.0.1:{port}/metrics"));
    let port_name = container["ports"][0]["name"].as_str();
    assert_eq!(port_name, Some("metrics"));
    assert!(exposition.contains("memtriage_"), "{exposition}");
}

/// What `serve` exported on a real H100 with a process holding 2 GiB (captured on a
/// lent GPU machine, see the fixture's README): promtool passes it, every family in
/// it is documented, and the GPU figures hang together.
#[test]
fn an_h100s_real_exposition_passes_promtool_and_every_family_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(
        root.join("crates/memtriage-core/tests/fixtures/gpu-real/h100/serve-metrics.txt"),
    )
    .unwrap();
    let docs = std::fs::read_to_string(root.join("docs/serve-metrics.md")).unwrap();
    let families: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(families.len() > 20, "{families:?}");
    for f in &families {
        assert!(
            docs.contains(&format!("`{f}`")) || docs.contains(&format!("`{f}_total`")),
            "{f} is exported but not in docs/serve-metrics.md"
        );
    }
    let value = |series: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{series} missing"))
    };
    let total = value("memtriage_gpu_memory_total_bytes{gpu=\"0\"}");
    let used = value("memtriage_gpu_memory_used_bytes{gpu=\"0\"}");
    let held = value("memtriage_group_gpu_memory_bytes{group=\"holder\",gpu=\"0\"}");
    assert!(
        held >= (2u64 << 30) as f64 && held <= used && used <= total,
        "{held} {used} {total}"
    );
    assert_eq!(value("memtriage_source_up{source=\"nvml\"}"), 1.0);
    if have("promtool") {
        promtool_check_metrics(&text);
    }
}
