//! What a cgroup path says about the workload in it: the Kubernetes pod and
//! container, the Slurm job and step, or the systemd unit. Read from the path alone,
//! so a cgroup that is already gone (its container restarted) is still named.
//!
//! Layouts read: kubelet's cgroupfs driver (`/kubepods/burstable/pod<uid>/<id>`) and
//! systemd driver (`/kubepods.slice/kubepods-burstable.slice/
//! kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope`, and
//! `crio-`, `docker-`, `cri-dockerd-` scopes), Docker and Podman outside Kubernetes
//! (`/docker/<id>`, `docker-<id>.scope`, `libpod-<id>.scope`), Slurm's v1
//! (`/slurm/uid_N/job_N/step_N`) and v2 (`/system.slice/slurmstepd.scope/job_N/step_N`)
//! layouts, and systemd services, scopes and user sessions.

/// Each field is `None` where the path does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workload {
    /// The pod's UID with dashes, as `kube_pod_info{uid}` has it.
    pub pod_uid: Option<String>,
    /// The container's id (hex), as the runtime names it.
    pub container_id: Option<String>,
    pub slurm_job: Option<String>,
    /// `0`, `batch`, `extern`, `interactive`…
    pub slurm_step: Option<String>,
    /// The innermost systemd service or scope that is not a container's own scope.
    pub systemd_unit: Option<String>,
}

/// Prefixes of the scopes container runtimes make under systemd: the unit is the
/// container, named by its id.
const CONTAINER_SCOPES: &[&str] = &[
    "cri-containerd-",
    "crio-",
    "docker-",
    "cri-dockerd-",
    "libpod-payload-",
    "libpod-",
];

pub fn from_cgroup_path(path: &str) -> Workload {
    let mut w = Workload::default();
    // containerd's systemd cgroup driver on some hosts writes `SLICE:RUNTIME:ID` as
    // one component.
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty())
        .flat_map(|p| p.split(':'))
        .collect();
    let mut in_pod_or_docker = false;
    for part in parts {
        if let Some(uid) = pod_uid(part) {
            w.pod_uid = Some(uid);
            // A container above the pod (kind's node, an LXC host) is not the pod's.
            w.container_id = None;
            in_pod_or_docker = true;
            continue;
        }
        let unit = part
            .strip_suffix(".scope")
            .or_else(|| part.strip_suffix(".service"));
        // crio's monitor process, not the container.
        if part.starts_with("crio-conmon-") {
            continue;
        }
        let scoped = CONTAINER_SCOPES
            .iter()
            .find_map(|p| unit.unwrap_or(part).strip_prefix(p))
            .filter(|id| is_container_id(id));
        if let Some(id) = scoped {
            w.container_id = Some(id.to_string());
            continue;
        }
        if unit.is_some() {
            w.systemd_unit = Some(part.to_string());
            continue;
        }
        if part == "docker" {
            in_pod_or_docker = true;
            continue;
        }
        // cgroupfs layouts name the container by its bare id, below its pod or /docker;
        // a full 64-digit id is one anywhere.
        if is_container_id(part) && (in_pod_or_docker || part.len() == 64) {
            w.container_id = Some(part.to_string());
            continue;
        }
        if let Some(job) = part.strip_prefix("job_").filter(|j| is_digits(j)) {
            w.slurm_job = Some(job.to_string());
            continue;
        }
        if w.slurm_job.is_some() {
            if let Some(step) = part.strip_prefix("step_").filter(|s| !s.is_empty()) {
                w.slurm_step = Some(step.to_string());
            }
        }
    }
    w
}

/// `pod<uid>` as a path component, bare (cgroupfs) or inside a slice name
/// (`kubepods-besteffort-pod<uid>.slice`, with `_` for `-`).
fn pod_uid(part: &str) -> Option<String> {
    let name = part.strip_suffix(".slice").unwrap_or(part);
    let at = name.rfind("pod")?;
    let before = &name[..at];
    if !(before.is_empty() || before.ends_with('-')) {
        return None;
    }
    let uid = name[at + 3..].replace('_', "-");
    // A static pod's UID is its manifest's 32-digit hash, without dashes.
    let hash = uid.len() == 32 && uid.bytes().all(|b| b.is_ascii_hexdigit());
    (is_uid(&uid) || hash).then_some(uid)
}

/// `8-4-4-4-12` hex digits.
fn is_uid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Container ids are 64 hex digits; some tools shorten them to 12.
fn is_container_id(s: &str) -> bool {
    (s.len() == 64 || s.len() == 12) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "8d7b7e7a1f2b4c9a0e3d5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708";

    #[test]
    fn kubelet_systemd_driver_names_pod_and_container() {
        let path = format!(
            "/kubepods.slice/kubepods-burstable.slice/\
             kubepods-burstable-pod0f3c1a2b_4d5e_6f70_8192_a3b4c5d6e7f8.slice/cri-containerd-{ID}.scope"
        );
        let w = from_cgroup_path(&path);
        assert_eq!(
            w.pod_uid.as_deref(),
            Some("0f3c1a2b-4d5e-6f70-8192-a3b4c5d6e7f8")
        );
        assert_eq!(w.container_id.as_deref(), Some(ID));
        assert_eq!(w.systemd_unit, None);
    }

    #[test]
    fn kubelet_cgroupfs_driver_names_pod_and_container() {
        let w = from_cgroup_path(&format!(
            "/kubepods/besteffort/pod0f3c1a2b-4d5e-6f70-8192-a3b4c5d6e7f8/{ID}"
        ));
        assert_eq!(
            w.pod_uid.as_deref(),
            Some("0f3c1a2b-4d5e-6f70-8192-a3b4c5d6e7f8")
        );
        assert_eq!(w.container_id.as_deref(), Some(ID));
    }

    #[test]
    fn crio_monitor_is_not_the_container() {
        let w = from_cgroup_path(&format!(
            "/kubepods.slice/kubepods-pod0f3c1a2b_4d5e_6f70_8192_a3b4c5d6e7f8.slice/crio-conmon-{ID}.scope"
        ));
        assert!(w.pod_uid.is_some());
        assert_eq!(w.container_id, None);
    }

    #[test]
    fn slurm_v1_and_v2_layouts() {
        let w = from_cgroup_path("/slurm/uid_1000/job_4242/step_batch");
        assert_eq!(w.slurm_job.as_deref(), Some("4242"));
        assert_eq!(w.slurm_step.as_deref(), Some("batch"));
        let w = from_cgroup_path("/system.slice/slurmstepd.scope/job_77/step_0/user/task_0");
        assert_eq!(w.slurm_job.as_deref(), Some("77"));
        assert_eq!(w.slurm_step.as_deref(), Some("0"));
        assert_eq!(w.systemd_unit.as_deref(), Some("slurmstepd.scope"));
    }

    #[test]
    fn docker_and_systemd_units() {
        let w = from_cgroup_path(&format!("/docker/{ID}"));
        assert_eq!(w.container_id.as_deref(), Some(ID));
        let w = from_cgroup_path(&format!("/system.slice/docker-{ID}.scope"));
        assert_eq!(w.container_id.as_deref(), Some(ID));
        let w = from_cgroup_path("/user.slice/user-1000.slice/session-3.scope");
        assert_eq!(w.systemd_unit.as_deref(), Some("session-3.scope"));
        let w = from_cgroup_path("/system.slice/ollama.service");
        assert_eq!(w.systemd_unit.as_deref(), Some("ollama.service"));
        assert_eq!(from_cgroup_path("/"), Workload::default());
        assert_eq!(from_cgroup_path("/kubepods/podcast"), Workload::default());
    }
}
