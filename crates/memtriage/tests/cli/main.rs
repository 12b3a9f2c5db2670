//! The CLI's integration tests, one binary: each module drives the built `memtriage`
//! as a user does, one command or concern per module; `support` holds what they share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod cache_live;
mod doctor_cli;
mod explain_cli;
mod gpu_nvml;
mod html_browser;
mod inspect_captured;
mod inspect_live;
mod record_live;
mod report_cli;
mod run_cuda_hook;
mod run_growth_live;
mod run_killers;
mod run_lines;
mod run_live;
mod run_processes;
mod run_torch;
mod run_trust;
mod serve_deploy;
mod serve_live;
mod slurm_epilog;
mod top_batch;
mod top_tmux;
