//! Conformance with the plugin in a child process, so that a plugin that
//! crashes (a segfault, an abort) fails the case it crashed in instead of
//! ending the run.
//!
//! The supervisor ([`supervise`]) starts a worker process ([`worker`]), which
//! runs [`conformance::run_with`] and writes one JSON message per line on
//! its standard output: the plugin opens, it loaded, an instance starts,
//! the plugin is entered (call and op), an instance finished, done. When the worker
//! dies before `done`, the supervisor fails the instance that was running,
//! naming the signal and the plugin call it died in, and starts a new
//! worker that resumes after it.

use crate::conformance::{self, Progress, Report, Row, Selection};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// One line of the worker's output.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Opening { plugin: String, library: String },
    Loaded { devices: Vec<String> },
    Starting(Row),
    Call { call: String, op: Option<String> },
    Finished(Row),
    NotLoaded { reason: String },
    Done,
}

fn send(message: &Message) {
    let line = serde_json::to_string(message).expect("messages serialise");
    let mut out = std::io::stdout().lock();
    // A supervisor that went away has nobody left to tell.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn watch_call(call: &'static str, op: Option<&'static str>) {
    send(&Message::Call {
        call: call.to_owned(),
        op: op.map(str::to_owned),
    });
}

/// Progress sent to the supervisor.
struct ToSupervisor;

impl Progress for ToSupervisor {
    fn opening(&mut self, report: &Report) {
        send(&Message::Opening {
            plugin: report.plugin.clone(),
            library: report.library.clone(),
        });
    }

    fn loaded(&mut self, report: &Report) {
        send(&Message::Loaded {
            devices: report.devices.clone(),
        });
    }

    fn starting(&mut self, row: &Row) {
        send(&Message::Starting(row.clone()));
    }

    fn finished(&mut self, row: &Row) {
        send(&Message::Finished(row.clone()));
    }
}

/// The worker's side: runs `selection` of the suite against `path`,
/// reporting on standard output. Exits normally whatever the results; only
/// a crash ends it otherwise.
pub fn worker(path: &Path, selection: Selection<'_>) {
    anydev_core::plugin::watch_calls(watch_call);
    let report = conformance::run_with(path, selection, &mut ToSupervisor);
    if let Some(reason) = &report.error {
        send(&Message::NotLoaded { reason: reason.clone() });
    }
    send(&Message::Done);
}

/// What one worker process reported before it ended.
#[derive(Default)]
struct Heard {
    loaded: bool,
    /// The instance that started and has not finished.
    running: Option<Row>,
    /// The last plugin call entered, with its op.
    last_call: Option<String>,
    /// The last instance that finished.
    last_finished: Option<String>,
    done: bool,
}

/// The supervisor's side: runs the suite against `path` in worker
/// processes and gathers one report. `worker` makes the command for a
/// worker that resumes after the given instance (or starts at the
/// beginning), with whatever filter the caller wants; `path` only names
/// the report until a worker says more.
pub fn supervise(path: &Path, worker: &dyn Fn(Option<&str>) -> Command) -> Report {
    let mut report = Report::new(path);
    let mut resume_after: Option<String> = None;
    loop {
        let mut command = worker(resume_after.as_deref());
        let (heard, status) = match listen(&mut command, &mut report) {
            Ok(ended) => ended,
            Err(e) => {
                report.fail_to_start(format!("cannot run the conformance worker: {e}"));
                return report;
            }
        };
        if heard.done {
            return report;
        }
        let death = describe_death(status, heard.last_call.as_deref());
        match heard.running {
            Some(mut row) => {
                row.reason = format!(
                    "case {} on {}{}: the plugin crashed the process: {death}",
                    row.case,
                    row.device,
                    row.dtype.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
                );
                row.outcome = "fail".to_owned();
                resume_after = Some(row.name.clone());
                report.push(row);
            }
            None if !heard.loaded => {
                report.fail_to_start(format!("the plugin crashed the process while loading: {death}"));
                return report;
            }
            None => {
                let after = heard.last_finished.as_deref().unwrap_or("the start");
                report.fail_to_start(format!(
                    "the plugin crashed the process after {after}, outside any case: {death}"
                ));
                return report;
            }
        }
    }
}

/// Runs one worker, adding what it reports to `report`.
fn listen(command: &mut Command, report: &mut Report) -> std::io::Result<(Heard, ExitStatus)> {
    let mut child = command.stdout(Stdio::piped()).stdin(Stdio::null()).spawn()?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut heard = Heard::default();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        // A plugin may print to standard output too; only messages count.
        let Ok(message) = serde_json::from_str::<Message>(&line) else {
            continue;
        };
        match message {
            Message::Opening { plugin, library } => {
                report.plugin = plugin;
                report.library = library;
            }
            Message::Loaded { devices } => {
                report.devices = devices;
                heard.loaded = true;
            }
            Message::Starting(row) => {
                heard.running = Some(row);
                heard.last_call = None;
            }
            Message::Call { call, op } => {
                heard.last_call = Some(match op {
                    Some(op) => format!("{call} of op {op}"),
                    None => call,
                });
            }
            Message::Finished(row) => {
                heard.running = None;
                heard.last_finished = Some(row.name.clone());
                report.push(row);
            }
            Message::NotLoaded { reason } => report.fail_to_start(reason),
            Message::Done => heard.done = true,
        }
    }
    let status = child.wait()?;
    Ok((heard, status))
}

/// "killed by signal 11 (SIGSEGV)", or the exit status of a process that
/// ended early without a signal.
pub fn describe_exit(status: ExitStatus) -> String {
    match signal_of(status) {
        Some(signal) => format!("killed by signal {signal} ({})", signal_name(signal)),
        None => format!("exited with {status} before finishing"),
    }
}

/// "killed by signal 11 (SIGSEGV) in plugin call execute of op add".
fn describe_death(status: ExitStatus, last_call: Option<&str>) -> String {
    let how = describe_exit(status);
    match last_call {
        Some(call) => format!("{how} in plugin call {call}"),
        None => format!("{how} outside any plugin call"),
    }
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

/// The names of the signals a crashing library usually dies of (numbers
/// that Linux and macOS share).
fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        _ => "see kill -l",
    }
}
