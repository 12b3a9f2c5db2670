//! How a command ended, and the one place that turns it into a process exit code
//! (README's table: 0 ok, 1 an error finding, 2 bad usage or input, `run`'s job code).

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// The command did what was asked.
    Success,
    /// A finding at error severity, where the command judges (`doctor`).
    ErrorFinding,
    /// Bad usage or input: an unknown pid, a malformed file, a log that cannot be read.
    BadInput,
    /// A bug in memtriage; the message said so and how to report it. Scripts cannot
    /// act on a bug differently from a failure, so it shares the failure's code.
    Internal,
    /// `run`: the job's own exit code, or 128+signal as a shell reports it.
    Job(u8),
}

impl ExitStatus {
    /// The job's status as a shell would see it: only the low byte reaches a parent.
    pub fn job(shell_code: i32) -> Self {
        ExitStatus::Job((shell_code & 0xff) as u8)
    }

    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::ErrorFinding => 1,
            ExitStatus::BadInput | ExitStatus::Internal => 2,
            ExitStatus::Job(code) => code,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::ExitStatus;

    #[test]
    fn codes_follow_the_readme_table() {
        assert_eq!(ExitStatus::Success.code(), 0);
        assert_eq!(ExitStatus::ErrorFinding.code(), 1);
        assert_eq!(ExitStatus::BadInput.code(), 2);
        assert_eq!(ExitStatus::Internal.code(), 2);
        assert_eq!(ExitStatus::job(3).code(), 3);
        assert_eq!(ExitStatus::job(128 + 9).code(), 137);
    }

    #[test]
    fn a_job_code_keeps_only_the_byte_a_parent_sees() {
        assert_eq!(ExitStatus::job(256 + 1), ExitStatus::Job(1));
        assert_eq!(ExitStatus::job(-1), ExitStatus::Job(255));
    }
}
