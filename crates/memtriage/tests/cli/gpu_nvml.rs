//! GPUs through NVML without a GPU: `memtriage-fake-nvml`, a stand-in for
//! libnvidia-ml that answers from a JSON file, is loaded through `MEMTRIAGE_NVML_LIB`,
//! so the real loading, the real joins of NVML's pids to live processes, doctor's
//! checks, run's sampling and the driver's events run here. Its processes are real:
//! an entry names a `comm`, and every live process of that name holds the memory.
//! And the paths every machine without a GPU takes: no library, NVML refusing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::support::{fake_nvml, finding, finding_ids, memtriage, root_or_skip, run_report, u};

const GIB: u64 = 1 << 30;

/// A test's GPUs: the fake's configuration, and programs named as the test needs.
pub(crate) struct Gpus {
    dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl Gpus {
    pub(crate) fn new(config: &Value) -> Gpus {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("nvml.json"), config.to_string()).unwrap();
        Gpus {
            dir,
            children: Vec::new(),
        }
    }

    /// `memtriage` loading the fake NVML with this configuration.
    fn memtriage(&self) -> Command {
        let mut c = memtriage();
        self.env(&mut c);
        c
    }

    pub(crate) fn env(&self, c: &mut Command) {
        c.env("MEMTRIAGE_NVML_LIB", fake_nvml())
            .env("FAKE_NVML_CONFIG", self.dir.path().join("nvml.json"))
            .env("NO_COLOR", "1");
    }

    /// A copy of `sleep` called `name` (its comm), for the fake to match.
    fn program(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if !path.exists() {
            std::fs::copy("/bin/sleep", &path).unwrap();
        }
        path
    }

    /// Starts `name` sleeping; its pid.
    pub(crate) fn start(&mut self, name: &str) -> i32 {
        let program = self.program(name);
        let child = spawn(Command::new(&program).arg("120").stdin(Stdio::null()));
        let pid = child.id() as i32;
        self.children.push(child);
        pid
    }
}

impl Drop for Gpus {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Spawns a program this test just copied. Another test thread forking while the
/// copy was written holds it open until its child execs: "text file busy" (ETXTBSY)
/// for a moment.
fn spawn(c: &mut Command) -> Child {
    const ETXTBSY: i32 = 26;
    let mut tries = 0;
    loop {
        match c.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
}

pub(crate) fn h100(processes: Value) -> Value {
    json!({
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-5a1c2e3f-0000-4000-8000-000000000001",
        "pci_bus_id": "00000000:3B:00.0",
        "total": 80 * GIB,
        "used": 40 * GIB,
        "persistence": true,
        "compute": processes,
    })
}

fn json_of(c: &mut Command) -> Value {
    let out = c.output().expect("run memtriage");
    assert!(
        out.status.success(),
        "{c:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// A pid no process has now.
fn free_pid() -> u32 {
    (4_000_000..)
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap()
}

#[test]
fn inspect_tells_apart_two_processes_on_one_gpu() {
    let gone = free_pid();
    let mut device = h100(json!([
        {"comm": "gpujob_a", "used": 3 * GIB},
        {"comm": "gpujob_b", "used": 5 * GIB},
        {"pid": gone, "used": GIB},
    ]));
    // gpujob_a also has a graphics context: NVML lists it twice, it holds 3 GiB once.
    device["graphics"] = json!([{"comm": "gpujob_a", "used": 3 * GIB}]);
    let mut gpus = Gpus::new(&json!({"devices": [device]}));
    let a = gpus.start("gpujob_a");
    let b = gpus.start("gpujob_b");
    let bystander = gpus.start("not_on_gpu");
    let v = json_of(gpus.memtriage().args([
        "inspect",
        "--json",
        &a.to_string(),
        &b.to_string(),
        &bystander.to_string(),
    ]));
    let held = |pid: i32| {
        let p = v["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"] == pid)
            .unwrap();
        u(p, "gpu.total")
    };
    assert_eq!(held(a), 3 * GIB);
    assert_eq!(held(b), 5 * GIB);
    // NVML is read and lists it nowhere: it holds none, which is known.
    assert_eq!(held(bystander), 0);
    let g = &v["gpu"];
    assert_eq!(g["available"], true);
    assert_eq!(g["pids"]["join"], "host");
    assert_eq!(g["driver_version"], "550.54.15");
    assert_eq!(g["cuda_version"], "12.4");
    let device = &g["devices"][0];
    assert_eq!(device["pci_bus_id"], "00000000:3B:00.0");
    assert_eq!(u(device, "memory.total"), 80 * GIB);
    let listed = device["processes"].as_array().unwrap();
    let a_entry = listed.iter().find(|p| p["pid"] == a).unwrap();
    assert_eq!(a_entry["comm"], "gpujob_a");
    assert_eq!(a_entry["host_pid"], a);
    let dead = listed.iter().find(|p| p["host_pid"] == gone).unwrap();
    assert_eq!(dead["state"], Value::Null, "{dead}");

    // People see it too: a GPU row per process.
    let out = gpus
        .memtriage()
        .args(["inspect", &a.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("gpu         GPU 0 3.0 GiB"), "{text}");
}

#[test]
fn a_tree_sums_gpu_memory_and_flags_a_child_with_its_own_cuda_context() {
    let mut gpus = Gpus::new(&json!({"devices": [h100(json!([
        {"comm": "gputrainer", "used": GIB},
    ]))]}));
    // A trainer whose child (a worker) is also a `gputrainer` holding its own context.
    let trainer = gpus.program("gputrainer");
    std::fs::copy("/bin/bash", &trainer).unwrap();
    let script = format!(
        "{} -c 'sleep 120; true' & sleep 120; wait",
        trainer.display()
    );
    let parent = spawn(
        Command::new(&trainer)
            .args(["-c", &script])
            .stdin(Stdio::null()),
    );
    let pid = parent.id() as i32;
    gpus.children.push(parent);
    assert!(crate::support::wait_until(
        std::time::Duration::from_secs(5),
        std::time::Duration::from_millis(20),
        || std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| !c.trim().is_empty())
    ));
    std::thread::sleep(std::time::Duration::from_millis(100));
    let v = json_of(
        gpus.memtriage()
            .args(["inspect", "--tree", "--json", &pid.to_string()]),
    );
    let tree = &v["trees"][0];
    assert_eq!(u(tree, "totals.gpu"), 2 * GIB, "{}", tree["totals"]);
    let ids = finding_ids(tree);
    assert!(ids.contains(&"gpu.worker-context".to_string()), "{ids:?}");
    let f = finding(tree, "gpu.worker-context");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains(&format!("a child of pid {pid} (gputrainer)")),
        "{f}"
    );
    assert!(f["title"]
        .as_str()
        .unwrap()
        .ends_with("holds 1.0 GiB on GPU 0 of its own"));
}

#[test]
fn doctor_checks_ecc_pending_remaps_persistence_orphans_and_mig() {
    let gone = free_pid();
    let mut device = h100(json!([{"pid": gone, "used": 7 * GIB}]));
    device["persistence"] = json!(false);
    device["ecc"] = json!([12, 2, 40, 3]);
    device["remapped"] = json!([0, 2, true, false]);
    device["mig"] = json!([false, true]);
    let gpus = Gpus::new(&json!({"devices": [device]}));
    let out = gpus
        .memtriage()
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "error findings exit 1");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = finding_ids(&v);
    for id in [
        "gpu.ecc-uncorrected",
        "gpu.remap-pending",
        "gpu.persistence-off",
        "gpu.orphan-memory",
        "gpu.mig",
    ] {
        assert!(ids.contains(&id.to_string()), "{id} not in {ids:?}");
    }
    assert!(!ids.contains(&"gpu.ok".to_string()));
    assert_eq!(finding(&v, "gpu.ecc-uncorrected")["severity"], "error");
    let orphan = finding(&v, "gpu.orphan-memory");
    assert!(
        orphan["title"].as_str().unwrap().contains("7.0 GiB"),
        "{orphan}"
    );
    assert!(orphan["evidence"][0]["label"]
        .as_str()
        .unwrap()
        .starts_with(&format!("pid {gone} on GPU 0")));
    assert!(finding(&v, "gpu.mig")["title"]
        .as_str()
        .unwrap()
        .contains("waits for a GPU reset"));
    assert!(finding(&v, "gpu.remap-pending")["fix"]
        .as_str()
        .unwrap()
        .contains("nvidia-smi -r -i 0"));

    // A healthy GPU passes with its figures. (doctor's exit status is the whole
    // machine's: an OOM kill on this machine in the last hour is an error too.)
    let gpus = Gpus::new(&json!({"devices": [h100(json!([]))]}));
    let out = gpus
        .memtriage()
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !finding_ids(&v)
            .iter()
            .any(|id| id.starts_with("gpu.") && id != "gpu.ok"),
        "{v}"
    );
    let ok = finding(&v, "gpu.ok");
    assert_eq!(ok["severity"], "ok");
    assert!(ok["evidence"][0]["value"]
        .as_str()
        .unwrap()
        .contains("40.0 GiB of 80.0 GiB used"));
}

#[test]
fn without_nvml_every_command_works_and_says_why_once() {
    let missing = "/nonexistent/libnvidia-ml.so.1";
    let with_missing = |args: &[&str]| {
        memtriage()
            .args(args)
            .env("MEMTRIAGE_NVML_LIB", missing)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let me = std::process::id().to_string();
    let out = with_missing(&["inspect", "--json", &me]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gpu"]["available"], false);
    let reason = v["gpu"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("MEMTRIAGE_NVML_LIB={missing}")),
        "{reason}"
    );
    // Unknown, not 0.
    assert_eq!(v["processes"][0]["gpu"], Value::Null);
    let text = with_missing(&["inspect", &me]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.matches("GPU: ").count(), 1, "{text}");

    let out = with_missing(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(finding(&v, "gpu.nvml-failed")["severity"], "warn");

    let out = with_missing(&["run", "--json", "--", "true"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = run_report(&out.stderr);
    assert_eq!(report["gpu"]["available"], false);
    assert!(report["gpu"]["reason"].as_str().unwrap().contains(missing));

    // A machine without the NVIDIA driver: "no NVIDIA GPU found".
    let driver_here = ["/proc/driver/nvidia", "/dev/nvidiactl"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !driver_here {
        let out = memtriage()
            .args(["inspect", "--json", &me])
            .env_remove("MEMTRIAGE_NVML_LIB")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["gpu"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("no NVIDIA GPU found (no NVIDIA driver is loaded"));
        let out = memtriage()
            .args(["doctor", "--json"])
            .env_remove("MEMTRIAGE_NVML_LIB")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(finding(&v, "gpu.absent")["severity"], "info");
    }
}

#[test]
fn nvml_refusing_or_no_driver_is_a_reason_not_an_error() {
    for (code, says) in [
        (4, "insufficient permissions"),
        (9, "the NVIDIA kernel driver is not loaded"),
        (18, "different versions"),
    ] {
        let gpus = Gpus::new(&json!({"init_error": code}));
        let me = std::process::id().to_string();
        let v = json_of(gpus.memtriage().args(["inspect", "--json", &me]));
        let reason = v["gpu"]["reason"].as_str().unwrap();
        assert!(reason.contains(says), "code {code}: {reason}");
        assert_eq!(v["processes"][0]["gpu"], Value::Null);
    }
}

#[test]
fn in_a_container_pid_namespace_nvml_pids_are_not_attributed() {
    if !root_or_skip("a new pid namespace needs root") {
        return;
    }
    // NVML names host pid 1; inside the namespace pid 1 is memtriage itself, which
    // must not be credited with that memory.
    let gpus = Gpus::new(&json!({"devices": [h100(json!([{"pid": 1, "used": 9 * GIB}]))]}));
    let mut c = Command::new("unshare");
    c.args(["--pid", "--fork", "--mount-proc"])
        .arg(crate::support::BIN)
        .args(["inspect", "--json", "1"]);
    gpus.env(&mut c);
    let v = json_of(&mut c);
    assert_eq!(v["gpu"]["pids"]["join"], "impossible", "{}", v["gpu"]);
    assert!(v["gpu"]["pids"]["reason"]
        .as_str()
        .unwrap()
        .contains("container's pid namespace"));
    assert_eq!(v["processes"][0]["gpu"], Value::Null);
    let listed = &v["gpu"]["devices"][0]["processes"][0];
    assert_eq!(listed["host_pid"], 1);
    assert_eq!(listed["pid"], Value::Null);

    // Seen from the host, a process in a container is joined, and named with the pid
    // its own logs give it too.
    let mut gpus =
        Gpus::new(&json!({"devices": [h100(json!([{"comm": "gpu_in_ns", "used": GIB}]))]}));
    let inner = gpus.program("gpu_in_ns");
    let ns = spawn(
        Command::new("unshare")
            .args(["--pid", "--fork", "--kill-child"])
            .arg(&inner)
            .arg("120")
            .stdin(Stdio::null()),
    );
    gpus.children.push(ns);
    assert!(crate::support::wait_until(
        std::time::Duration::from_secs(5),
        std::time::Duration::from_millis(20),
        || {
            let v = json_of(gpus.memtriage().args(["inspect", "--json", "1"]));
            !v["gpu"]["devices"][0]["processes"]
                .as_array()
                .unwrap()
                .is_empty()
        }
    ));
    let v = json_of(gpus.memtriage().args(["inspect", "--json", "1"]));
    let listed = &v["gpu"]["devices"][0]["processes"][0];
    assert_eq!(listed["comm"], "gpu_in_ns");
    assert_eq!(listed["container_pid"], 1, "{listed}");
    assert_ne!(listed["pid"], 1);
}

#[test]
fn run_names_what_else_held_the_gpu_on_a_cuda_oom_and_reports_xids() {
    let mut gpus = Gpus::new(&json!({"devices": [{
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-5a1c2e3f-0000-4000-8000-000000000001",
        "pci_bus_id": "00000000:3B:00.0",
        "total": 80 * GIB,
        "used": 78 * GIB,
        "persistence": true,
        "compute": [
            {"comm": "cudajob", "used": 46 * GIB},
            {"comm": "otherjob", "used": 31 * GIB}
        ],
        "xid_events": [{"after_ms": 200, "xid": 13}]
    }]}));
    let other = gpus.start("otherjob");
    let job = gpus.program("cudajob");
    let record = gpus.dir.path().join("run.jsonl");
    let script = format!(
        "{} 1.2; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
         GPU 0 has a total capacity of 79.11 GiB of which 1.05 GiB is free.' >&2; exit 1",
        job.display()
    );
    let out = gpus
        .memtriage()
        .args(["run", "--json", "--interval", "100ms", "--record"])
        .arg(&record)
        .args(["--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the job's status passes through"
    );
    let report = run_report(&out.stderr);
    let oom = finding(&report, "log.cuda-oom");
    let evidence: Vec<&str> = oom["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["value"].as_str().unwrap())
        .collect();
    let named = format!("pid {other} (otherjob), another job, held 31.0 GiB");
    assert!(evidence.contains(&named.as_str()), "{evidence:#?}");
    assert!(oom["fix"]
        .as_str()
        .unwrap()
        .starts_with("Other processes held 31.0 GiB of GPU 0"));
    let xid = finding(&report, "gpu.xid");
    assert!(xid["title"]
        .as_str()
        .unwrap()
        .starts_with("Xid 13 on GPU 0 while the job ran"));
    let g = &report["gpu"];
    assert_eq!(u(g, "devices.0.peak_job.bytes"), 46 * GIB);
    assert_eq!(u(g, "devices.0.total"), 80 * GIB);
    let cudajob = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["comm"] == "cudajob")
        .expect("the job's GPU process");
    assert_eq!(u(cudajob, "peak_gpu.bytes"), 46 * GIB);
    let shell = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["comm"] == "sh")
        .unwrap();
    assert_eq!(u(shell, "peak_gpu.bytes"), 0);

    // The page draws the job's GPU memory.
    let page = gpus.dir.path().join("run.html");
    let status = gpus
        .memtriage()
        .arg("report")
        .arg(&record)
        .arg("--html")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>GPU memory</h2>"));
    assert!(html.contains(r#"<polyline class="gpu""#));
}
