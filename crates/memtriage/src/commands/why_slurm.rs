//! `memtriage why --slurm-job ID`: a Slurm job's death explained on its node, and with
//! `--epilog` appended to the job's own output as the job's owner (what the epilog in
//! `deploy/slurm/` runs). An epilog never fails the node: what goes wrong is said on
//! stderr, for slurmd's log, and the caller exits 0 whatever this returns.

use std::io::Write;
use std::path::Path;

use memtriage_core::usecase::record::default_db;
use memtriage_core::usecase::slurm::{explain_job, SlurmAnswer, EPILOG_VERDICT};

use super::Context;
use crate::cli::WhyArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;
use crate::render::style::{ColorChoice, Style};

pub fn run(ctx: &Context, args: &WhyArgs, id: u64, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let db = args.db.clone().unwrap_or_else(default_db);
    let answer = explain_job(&ctx.root, id, &db)?;
    if args.epilog {
        return epilog(&answer, p);
    }
    if args.json {
        serde_json::to_writer_pretty(
            &mut p.out,
            &serde_json::json!({
                "schema": "memtriage.slurm-job/v1",
                "job": answer.job,
                "verdict": answer.verdict,
                "explained_in_output": answer.explained_in_output,
                "record": answer.record,
                "notes": answer.notes,
            }),
        )?;
        writeln!(p.out)?;
        return Ok(ExitStatus::Success);
    }
    let style = p.out.style();
    match &answer.verdict {
        Some(v) => {
            writeln!(p.out, "{}", style.bold(&format!("Slurm job {id}")))?;
            writeln!(p.out)?;
            render::findings::write(&mut p.out, &style, &v.findings)?;
        }
        None => writeln!(
            p.out,
            "memtriage why: job {id} did not die of memory or a fault that this node logged ({})",
            job_state(&answer)
        )?,
    }
    for n in &answer.notes {
        writeln!(p.out, "note: {n}")?;
    }
    Ok(ExitStatus::Success)
}

fn job_state(answer: &SlurmAnswer) -> String {
    let j = &answer.job;
    match (&j.state, &j.exit_code) {
        (Some(s), Some(e)) => format!("JobState={s} ExitCode={e}"),
        (Some(s), None) => format!("JobState={s}"),
        _ => "scontrol does not know it".into(),
    }
}

/// Appends the verdict to the job's output, unless there is none to give or the output
/// has one already (a `memtriage run` inside the job, an earlier epilog).
fn epilog(answer: &SlurmAnswer, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let id = answer.job.id;
    let Some(verdict) = &answer.verdict else {
        writeln!(
            p.err,
            "memtriage epilog: job {id}: nothing to explain ({})",
            job_state(answer)
        )?;
        return Ok(ExitStatus::Success);
    };
    if answer.explained_in_output {
        writeln!(
            p.err,
            "memtriage epilog: job {id}: its output has a verdict already"
        )?;
        return Ok(ExitStatus::Success);
    }
    // Written as the job's owner, and only as slurmd named it: scontrol's text holds
    // values the owner wrote.
    let job = &answer.job;
    let (Some(path), Some(uid), Some(gid), true) =
        (&job.output, job.uid, job.gid, job.owner_from_slurmd)
    else {
        anyhow::bail!(
            "job {id}: its output file, or its owner as slurmd names it (SLURM_JOB_UID, \
             SLURM_JOB_GID), is unknown: {}",
            verdict.short
        );
    };
    let mut text = Vec::new();
    writeln!(text)?;
    writeln!(text, "{EPILOG_VERDICT} {}", verdict.short)?;
    let plain = Style::for_stream(ColorChoice::Never, false, false);
    render::findings::write(&mut text, &plain, &verdict.findings)?;
    let groups = groups_of(job.user.as_deref(), gid);
    append_as(uid, gid, &groups, path, &text)?;
    writeln!(p.err, "memtriage epilog: job {id}: {}", verdict.short)?;
    Ok(ExitStatus::Success)
}

/// The owner's groups, as a login would have them: a file the job may write through a
/// supplementary group stays writable. Its primary group alone where unknown.
fn groups_of(user: Option<&str>, gid: u32) -> Vec<libc::gid_t> {
    let Some(name) = user.and_then(|u| std::ffi::CString::new(u).ok()) else {
        return vec![gid];
    };
    let mut groups: Vec<libc::gid_t> = vec![0; 64];
    for _ in 0..2 {
        let mut n = groups.len() as libc::c_int;
        // SAFETY: the buffer holds `n` entries; the name is a C string.
        let found = unsafe { libc::getgrouplist(name.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if found >= 0 {
            groups.truncate(n.max(0) as usize);
            return groups;
        }
        groups.resize(n.max(1) as usize, 0);
    }
    vec![gid]
}

/// Appends `text` to the regular file `path` (never made, never a link) with the
/// permissions of `uid`, `gid` and `groups`: a file the job's owner could not write is
/// not written.
fn append_as(
    uid: u32,
    gid: u32,
    groups: &[libc::gid_t],
    path: &Path,
    text: &[u8],
) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut command = Command::new("/bin/sh");
    command
        .args([
            "-c",
            "[ -f \"$1\" ] && [ ! -h \"$1\" ] || { echo 'not a regular file' >&2; exit 3; }; exec cat >> \"$1\"",
            "sh",
        ])
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let groups = groups.to_vec();
    // SAFETY: only async-signal-safe calls between fork and exec, on memory made
    // before the fork.
    unsafe {
        command.pre_exec(move || {
            if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    let written = child.stdin.take().expect("piped above").write_all(text);
    let status = child.wait()?;
    written?;
    anyhow::ensure!(
        status.success(),
        "could not append to {} as uid {uid}: {status}",
        path.display()
    );
    Ok(())
}
