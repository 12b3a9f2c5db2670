//! Unknown is not zero: each command's JSON read as root and as `nobody` about the
//! same root-owned things, walked side by side. A number that root reads above zero
//! must read the same order of figure, or `null`, for a user who was refused: a zero
//! there is a refused read passed off as a measurement.

use std::os::unix::process::CommandExt;

use crate::support::{memtriage, root_or_skip, Helper};

fn json_as(args: &[&str], nobody: bool) -> serde_json::Value {
    let mut cmd = memtriage();
    cmd.args(args);
    if nobody {
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?} (nobody: {nobody}) printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Paths where root read a positive number and `nobody` read exactly 0, and how many
/// positive figures of root's were compared at all.
struct Walk {
    zeros: Vec<String>,
    compared: usize,
}

fn invented_zeros(root: &serde_json::Value, user: &serde_json::Value, path: &str, out: &mut Walk) {
    use serde_json::Value;
    match (root, user) {
        (Value::Object(r), Value::Object(u)) => {
            for (k, rv) in r {
                if let Some(uv) = u.get(k) {
                    invented_zeros(rv, uv, &format!("{path}.{k}"), out);
                }
            }
        }
        (Value::Array(r), Value::Array(u)) if r.len() == u.len() => {
            for (i, (rv, uv)) in r.iter().zip(u).enumerate() {
                invented_zeros(rv, uv, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(r), u) if r.as_f64().is_some_and(|x| x > 0.0) => {
            out.compared += 1;
            if u.as_f64() == Some(0.0) {
                out.zeros.push(format!("{path}: root {r}, nobody 0"));
            }
        }
        _ => {}
    }
}

fn without_events(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.contains("fault") && !k.contains("stall"));
            m.values_mut().for_each(without_events);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_events),
        _ => {}
    }
}

/// The process entry of `pid` in an `inspect` report.
fn entry(v: &serde_json::Value, pid: i32) -> serde_json::Value {
    v["processes"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pid"] == pid))
        .cloned()
        .unwrap_or_else(|| panic!("pid {pid} missing: {v}"))
}

#[test]
fn a_refused_read_is_null_never_zero() {
    if !root_or_skip("needs root to compare root's view with another user's") {
        return;
    }
    let h = Helper::start(&["anon", "16"]);
    let pid = h.pid.to_string();
    let mut found = Walk {
        zeros: Vec::new(),
        compared: 0,
    };
    for args in [
        vec!["inspect", pid.as_str(), "--json"],
        vec!["inspect", "--all", "--json"],
    ] {
        let root = entry(&json_as(&args, false), h.pid);
        let user = entry(&json_as(&args, true), h.pid);
        invented_zeros(&root, &user, &format!("{args:?}"), &mut found);
    }
    let args = ["inspect", "--tree", pid.as_str(), "--json"];
    let (root, user) = (json_as(&args, false), json_as(&args, true));
    invented_zeros(
        &root["trees"][0]["nodes"][0],
        &user["trees"][0]["nodes"][0],
        "tree",
        &mut found,
    );
    let args = ["doctor", "--json"];
    let (root, user) = (json_as(&args, false), json_as(&args, true));
    invented_zeros(
        &root["system"],
        &user["system"],
        "doctor.system",
        &mut found,
    );
    // `run` of the same job by each: nobody cannot read the kernel log (kills are
    // then unknown, with a note), nothing else may read as 0.
    let job = [
        "--",
        "python3",
        "-c",
        "import time; b = bytearray(40 << 20); time.sleep(0.6)",
    ];
    let run_json = |nobody: bool| {
        let mut cmd = memtriage();
        cmd.args(["run", "--json", "--interval", "50ms"])
            .args(job)
            .current_dir("/tmp");
        if nobody {
            cmd.uid(65534).gid(65534);
        }
        crate::support::run_report(&cmd.output().unwrap().stderr)
    };
    let (mut root, mut user) = (run_json(false), run_json(true));
    // Fault counts and stall time are events of each run, not readings: the second
    // run may find the interpreter's pages cached and take no major fault, or run
    // while the machine's other work has stopped and stall for 0% of its time.
    for report in [&mut root, &mut user] {
        without_events(report);
    }
    invented_zeros(&root, &user, "run", &mut found);
    assert!(
        found.zeros.is_empty(),
        "zeros where root read figures:\n{}",
        found.zeros.join("\n")
    );
    // The walk met root's figures (RSS, PSS, faults, the machine's memory…), so a
    // zero in their place would have been seen.
    assert!(
        found.compared >= 40,
        "only {} figures compared",
        found.compared
    );
}
