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
    let (Some(path), Some(uid), Some(gid)) = (&answer.job.output, answer.job.uid, answer.job.gid)
    else {
        anyhow::bail!(
            "job {id}: its output file or owner is unknown: {}",
            verdict.short
        );
    };
    let mut text = Vec::new();
    writeln!(text)?;
    writeln!(text, "{EPILOG_VERDICT} {}", verdict.short)?;
    let plain = Style::for_stream(ColorChoice::Never, false, false);
    render::findings::write(&mut text, &plain, &verdict.findings)?;
    append_as(uid, gid, path, &text)?;
    writeln!(p.err, "memtriage epilog: job {id}: {}", verdict.short)?;
    Ok(ExitStatus::Success)
}

/// Appends `text` to `path` with the permissions of `uid`/`gid` and no other group: a
/// file the job's owner could not write is not written.
fn append_as(uid: u32, gid: u32, path: &Path, text: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", "cat >> \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    child.stdin.take().expect("piped above").write_all(text)?;
    let status = child.wait()?;
    anyhow::ensure!(
        status.success(),
        "could not append to {} as uid {uid}: {status}",
        path.display()
    );
    Ok(())
}
