//! A small recording for the page's unit tests: a job under a 64 MiB limit whose
//! worker ends early, which is warned about, and which is OOM-killed at 2.2 s; one
//! sample in the middle has no tree PSS (a missed reading).

use memtriage_core::model::run::Timeline;
use memtriage_core::usecase::report::parse_timeline;

fn sample(t: f64, rss_mib: u64, pss_mib: Option<u64>, minor: f64) -> String {
    let rss = rss_mib << 20;
    let pss = pss_mib.map_or("null".into(), |p| (p << 20).to_string());
    format!(
        r#"{{"type":"sample","t":{t},"processes":[{{"pid":31,"ppid":1,"comm":"python3","rss":{rss},"minflt":0,"majflt":0}}],"tree_rss":{rss},"tree_pss":{pss},"shm_used":0,"swap_used":0,"cgroup_usage":null,"psi_some_avg10":0.0,"minor_faults_per_second":{minor},"major_faults_per_second":0.0}}"#
    )
}

const SUMMARY: &str = r#"{"type":"summary","report":{"schema":"memtriage.run/v1","command":["python3","grow.py"],"pid":31,"wall_seconds":2.3,"outcome":{"exit_code":null,"signal":9,"core_dumped":false},"peak_tree_rss":{"bytes":67108864,"at_seconds":2.0},"faults":{"minor":1000,"major":0,"peak_minor_per_second":31272.0,"peak_major_per_second":0.0,"peak_major_at_seconds":0.0},"processes":[],"limit":{"version":"v2","dir":"/sys/fs/cgroup/memtriage-run-30","limit":67108864,"peak":67108864,"oom_kills":1,"removed":true},"sampling":{"interval_ms":500,"ticks":5,"pss_readings":4,"pss_read_seconds":0.0,"pss_read_max_ms":0.0,"peak_pss_max_age_seconds":0.0},"findings":[{"id":"run.oom-killed","severity":"error","title":"out of memory: the kernel killed pid 31 (python3) at its cgroup's memory limit","evidence":[{"label":"the job","value":"killed by SIGKILL (exit 137)","source":"wait4"}],"why":"The kernel frees memory by killing.","fix":"Raise the limit."}],"notes":[]}}"#;

/// The recording as `memtriage run --record` writes it.
pub fn oom_recording_text() -> String {
    let header = r#"{"type":"header","schema":"memtriage.record/v1","command":["python3","grow.py"],"interval_ms":500,"limit":67108864,"started_unix_ms":1}"#;
    let lines = [
        header.to_string(),
        r#"{"type":"event","t":0.0,"event":"start","pid":31,"outcome":null}"#.into(),
        sample(0.5, 16, Some(15), 12000.0),
        sample(1.0, 32, Some(30), 31272.0),
        r#"{"type":"event","t":1.1,"event":"exit","pid":40,"outcome":{"exit_code":0,"signal":null,"core_dumped":false}}"#.into(),
        sample(1.5, 48, None, 30000.0),
        r#"{"type":"event","t":1.6,"event":"warning","pid":31,"outcome":null,"label":"grows 32 MiB/s; the 64 MiB limit is reached in ~1 s"}"#.into(),
        sample(2.0, 62, Some(60), 28000.0),
        r#"{"type":"event","t":2.2,"event":"exit","pid":31,"outcome":{"exit_code":null,"signal":9,"core_dumped":false}}"#.into(),
        SUMMARY.into(),
    ];
    lines.join("\n") + "\n"
}

pub fn oom_recording() -> Timeline {
    parse_timeline(&oom_recording_text()).expect("the fixture is a valid recording")
}
