//! Streams: in-order queues of jobs, each served by its own worker thread.
//!
//! A stream counts the jobs enqueued on it (`submitted`) and the jobs its
//! worker has finished (`completed`); job `n` is the `n`th enqueued, and
//! jobs finish in that order. An event is a stream and a job number: it
//! has completed once the stream's `completed` reaches that number, so
//! recording, querying and waiting need no other bookkeeping.
//!
//! A job that fails in the worker leaves its error on the stream, where it
//! stays ("sticky") until a call that waits for that job reports it:
//! `synchronize_stream`, `synchronize(device)`, `copy_to_host` or an event
//! synchronize. It is reported once; later jobs still run.

use anydev_plugin::{PluginError, Result};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work of a stream.
pub enum Job {
    /// Device work (an op, a fill, a copy), named for error messages. It
    /// owns what it touches and sleeps the stream's delay before it runs.
    Work {
        what: &'static str,
        run: Box<dyn FnOnce() -> Result<()> + Send>,
    },
    /// Holds the stream until the event has completed (`wait_event`).
    Wait(SimEvent),
    /// Holds the stream while the host reads memory (`copy_to_host`).
    Gate(Arc<Gate>),
    /// Notes the time the stream reaches it, for a timed event.
    Stamp(Arc<OnceLock<Instant>>),
}

/// The first job failure not yet reported.
struct Failure {
    job: u64,
    error: PluginError,
}

struct Queue {
    jobs: VecDeque<Job>,
    submitted: u64,
    completed: u64,
    failure: Option<Failure>,
    /// Set when the stream is destroyed: the worker finishes what is queued
    /// and exits, and nothing more may be enqueued.
    closed: bool,
}

/// The state a stream shares with its worker, its events and its device's
/// registry.
pub struct StreamState {
    device: usize,
    id: u64,
    delay: Duration,
    queue: Mutex<Queue>,
    /// Signalled when a job is enqueued or the stream closes.
    work: Condvar,
    /// Signalled whenever `completed` advances.
    progress: Condvar,
    worker: Mutex<Option<JoinHandle<()>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Jobs run outside every lock and panics in them are caught, so a
    // poisoned lock still guards consistent data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl StreamState {
    /// A stream of `device` whose worker thread is running; `delay` is
    /// slept before every piece of device work.
    pub fn start(device: usize, id: u64, delay: Duration) -> Result<Arc<StreamState>> {
        let state = Arc::new(StreamState {
            device,
            id,
            delay,
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                submitted: 0,
                completed: 0,
                failure: None,
                closed: false,
            }),
            work: Condvar::new(),
            progress: Condvar::new(),
            worker: Mutex::new(None),
        });
        let worker = Arc::clone(&state);
        let handle = std::thread::Builder::new()
            .name(format!("anydev-sim{device}-stream{id}"))
            .spawn(move || worker.serve())
            .map_err(|e| PluginError::unavailable(format!("sim:{device}: cannot start a stream thread: {e}")))?;
        *lock(&state.worker) = Some(handle);
        Ok(state)
    }

    pub fn device(&self) -> usize {
        self.device
    }

    /// The worker: runs jobs in order until the stream is closed and empty.
    fn serve(&self) {
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                loop {
                    if let Some(job) = queue.jobs.pop_front() {
                        break job;
                    }
                    if queue.closed {
                        return;
                    }
                    queue = self.work.wait(queue).unwrap_or_else(PoisonError::into_inner);
                }
            };
            let outcome = self.run(job);
            let mut queue = lock(&self.queue);
            queue.completed += 1;
            if let Err(error) = outcome {
                if queue.failure.is_none() {
                    let job = queue.completed;
                    queue.failure = Some(Failure { job, error });
                }
            }
            drop(queue);
            self.progress.notify_all();
        }
    }

    fn run(&self, job: Job) -> Result<()> {
        match job {
            Job::Work { what, run } => {
                if !self.delay.is_zero() {
                    std::thread::sleep(self.delay);
                }
                let outcome = catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".to_owned());
                    Err(PluginError::internal(message))
                });
                outcome.map_err(|e| {
                    PluginError::new(
                        e.code,
                        format!(
                            "sim:{} stream {}: an enqueued {what} failed: {}",
                            self.device, self.id, e.message
                        ),
                    )
                })
            }
            Job::Wait(event) => {
                event.stream.wait_for(event.job);
                Ok(())
            }
            Job::Gate(gate) => {
                gate.open_and_wait();
                Ok(())
            }
            Job::Stamp(at) => {
                // Set once: this job is the only writer.
                let _ = at.set(Instant::now());
                Ok(())
            }
        }
    }

    /// The point after everything enqueued so far, and the time the stream
    /// reaches it: now when it has nothing pending, else when a time stamp
    /// enqueued behind the pending work runs.
    fn mark(&self) -> Result<(u64, Arc<OnceLock<Instant>>)> {
        let at = Arc::new(OnceLock::new());
        {
            let queue = lock(&self.queue);
            if queue.completed == queue.submitted {
                let _ = at.set(Instant::now());
                return Ok((queue.submitted, at));
            }
        }
        let job = self.enqueue(Job::Stamp(Arc::clone(&at)))?;
        Ok((job, at))
    }

    /// Appends `job`; returns its number.
    pub fn enqueue(&self, job: Job) -> Result<u64> {
        let mut queue = lock(&self.queue);
        if queue.closed {
            return Err(PluginError::invalid_argument(format!(
                "sim:{} stream {} is destroyed",
                self.device, self.id
            )));
        }
        queue.jobs.push_back(job);
        queue.submitted += 1;
        let number = queue.submitted;
        drop(queue);
        self.work.notify_one();
        Ok(number)
    }

    /// Enqueues device work.
    pub fn submit(&self, what: &'static str, run: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        self.enqueue(Job::Work {
            what,
            run: Box::new(run),
        })
        .map(drop)
    }

    /// The number of the last job enqueued so far.
    pub fn submitted(&self) -> u64 {
        lock(&self.queue).submitted
    }

    pub fn is_complete(&self, job: u64) -> bool {
        lock(&self.queue).completed >= job
    }

    /// Blocks until job `job` has completed.
    fn wait_for(&self, job: u64) {
        let mut queue = lock(&self.queue);
        while queue.completed < job {
            queue = self.progress.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The failure of a job numbered `job` or earlier, taken so that it is
    /// reported once.
    fn take_failure(&self, job: u64) -> Result<()> {
        let mut queue = lock(&self.queue);
        match queue.failure.take() {
            Some(failure) if failure.job <= job => Err(failure.error),
            other => {
                queue.failure = other;
                Ok(())
            }
        }
    }

    /// Blocks until job `job` has completed; reports a failure up to it.
    pub fn synchronize_to(&self, job: u64) -> Result<()> {
        self.wait_for(job);
        self.take_failure(job)
    }

    /// Blocks until everything enqueued so far has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.synchronize_to(self.submitted())
    }

    /// Runs `read` at this point of the stream: after every job enqueued
    /// before it and before any enqueued after it. Returns the failure of an
    /// earlier job instead of reading, if there is one.
    pub fn read_in_order<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let gate = Arc::new(Gate::default());
        let job = self.enqueue(Job::Gate(Arc::clone(&gate)))?;
        // Releases the worker however this returns.
        let _release = Release(&gate);
        gate.wait_open();
        self.take_failure(job - 1)?;
        read()
    }

    /// Closes the stream: the worker finishes the queued jobs and exits, and
    /// this joins it (unless called on the worker itself).
    pub fn close(&self) {
        lock(&self.queue).closed = true;
        self.work.notify_all();
        let handle = lock(&self.worker).take();
        if let Some(handle) = handle {
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
    }
}

/// A point in a stream: complete once the stream has finished job `job`.
#[derive(Clone)]
pub struct SimEvent {
    stream: Arc<StreamState>,
    job: u64,
    /// When the stream reached the event; set once it has.
    at: Arc<OnceLock<Instant>>,
}

impl SimEvent {
    /// The point after everything enqueued on `stream` so far.
    pub fn record(stream: &Arc<StreamState>) -> Result<SimEvent> {
        let (job, at) = stream.mark()?;
        Ok(SimEvent {
            stream: Arc::clone(stream),
            job,
            at,
        })
    }

    /// When the stream reached the event, once it has completed.
    pub fn completed_at(&self) -> Option<Instant> {
        self.at.get().copied()
    }

    pub fn is_complete(&self) -> bool {
        self.stream.is_complete(self.job)
    }

    /// Blocks until complete; reports a failure of the event's stream up to
    /// the event.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize_to(self.job)
    }

    /// Makes later work on `stream` wait for this event.
    pub fn wait_on(&self, stream: &StreamState) -> Result<()> {
        if self.is_complete() {
            return Ok(());
        }
        stream.enqueue(Job::Wait(self.clone())).map(drop)
    }
}

/// A rendezvous between a worker and a thread that reads at the worker's
/// position: the worker opens it and waits until it is released.
#[derive(Default)]
pub struct Gate {
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

impl Gate {
    fn open_and_wait(&self) {
        let mut state = lock(&self.state);
        state.0 = true;
        self.changed.notify_all();
        while !state.1 {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn wait_open(&self) {
        let mut state = lock(&self.state);
        while !state.0 {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn release(&self) {
        lock(&self.state).1 = true;
        self.changed.notify_all();
    }
}

struct Release<'a>(&'a Gate);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}
