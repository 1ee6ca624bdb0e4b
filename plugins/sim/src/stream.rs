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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a thread about to sleep until another acts (a worker out of
/// jobs, a host waiting for one) first watches for it: longer than the
/// host takes to enqueue a small op or the worker to run one.
const WATCH: Duration = Duration::from_micros(20);

/// Watches, without a lock, for `done` to hold, for at most [`WATCH`];
/// returns whether it did. A thread that sees the other side act within
/// that time makes no system call to sleep, and the other side none to
/// wake it: on a virtual machine a wake-up costs tens of microseconds, as
/// much as the small op itself. GPU drivers spin on their queues before
/// they block for the same reason. Not on a single core, where watching
/// would only delay the other side.
fn watch(done: impl Fn() -> bool) -> bool {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if cores < 2 {
        return done();
    }
    let start = Instant::now();
    while !done() {
        if start.elapsed() >= WATCH {
            return false;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
    true
}

/// Work of a stream.
pub enum Job {
    /// Device work (an op, a fill, a copy), named for error messages. It
    /// owns what it touches and sleeps the stream's delay before it runs.
    Work { what: &'static str, run: Work },
    /// Holds the stream until the event has completed (`wait_event`).
    Wait(SimEvent),
    /// Holds the stream while the host reads memory (`copy_to_host`).
    Gate(Arc<Gate>),
}

/// Device work, run once by the worker. It is dropped, with everything it
/// owns (the blocks of buffers the host has already freed included), by
/// the next thread that enqueues on the stream or synchronises with it
/// (`Queue::spent`), not by the worker: glibc's allocator locks the arena
/// of the thread that allocated a block to free it anywhere else, so a
/// worker freeing what the host allocated made the host's next allocation
/// wait.
type Work = Box<dyn FnMut() -> Result<()> + Send>;

/// The first job failure not yet reported.
struct Failure {
    job: u64,
    error: PluginError,
}

struct Queue {
    jobs: VecDeque<Job>,
    failure: Option<Failure>,
    /// Set when the stream is destroyed: the worker finishes what is queued
    /// and exits, and nothing more may be enqueued.
    closed: bool,
    /// Whether the worker is asleep on `work`. Only then does an enqueue
    /// wake it: a futex wake is a system call, and a busy worker would pay
    /// for one per job.
    worker_asleep: bool,
    /// Threads asleep on `progress`; the worker signals it only for them.
    waiters: usize,
    /// Times to note when the stream finishes a job, for timed events:
    /// (job number, its time), in job order.
    stamps: VecDeque<(u64, Arc<OnceLock<Instant>>)>,
    /// Work the worker has run, for the next enqueue or synchronisation
    /// to drop (see [`Work`]).
    spent: Vec<Work>,
}

/// The state a stream shares with its worker, its events and its device's
/// registry.
pub struct StreamState {
    device: usize,
    id: u64,
    delay: Duration,
    queue: Mutex<Queue>,
    /// Jobs enqueued and jobs finished. Both change only under `queue`'s
    /// lock, so they agree with it there, and can be read without it by a
    /// thread watching for the other side.
    submitted: AtomicU64,
    completed: AtomicU64,
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
                failure: None,
                closed: false,
                worker_asleep: false,
                waiters: 0,
                stamps: VecDeque::new(),
                spent: Vec::new(),
            }),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
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
                let mut watched = false;
                loop {
                    if let Some(job) = queue.jobs.pop_front() {
                        break job;
                    }
                    if queue.closed {
                        return;
                    }
                    if !watched {
                        watched = true;
                        let seen = self.submitted();
                        drop(queue);
                        watch(|| self.submitted() != seen);
                        queue = lock(&self.queue);
                        continue;
                    }
                    queue.worker_asleep = true;
                    queue = self.work.wait(queue).unwrap_or_else(PoisonError::into_inner);
                    queue.worker_asleep = false;
                }
            };
            let (outcome, spent) = self.run(job);
            let mut queue = lock(&self.queue);
            queue.spent.extend(spent);
            let completed = self.completed.fetch_add(1, Ordering::AcqRel) + 1;
            while queue.stamps.front().is_some_and(|(job, _)| *job <= completed) {
                if let Some((_, at)) = queue.stamps.pop_front() {
                    // Set once: the worker is the only writer.
                    let _ = at.set(Instant::now());
                }
            }
            if let Err(error) = outcome {
                if queue.failure.is_none() {
                    queue.failure = Some(Failure { job: completed, error });
                }
            }
            let anyone_waits = queue.waiters > 0;
            drop(queue);
            if anyone_waits {
                self.progress.notify_all();
            }
        }
    }

    /// Runs `job`; returns its outcome and, for device work, the spent box.
    fn run(&self, job: Job) -> (Result<()>, Option<Work>) {
        match job {
            Job::Work { what, mut run } => {
                if !self.delay.is_zero() {
                    std::thread::sleep(self.delay);
                }
                let outcome = catch_unwind(AssertUnwindSafe(&mut run)).unwrap_or_else(|panic| {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".to_owned());
                    Err(PluginError::internal(message))
                });
                let outcome = outcome.map_err(|e| {
                    PluginError::new(
                        e.code,
                        format!(
                            "sim:{} stream {}: an enqueued {what} failed: {}",
                            self.device, self.id, e.message
                        ),
                    )
                });
                (outcome, Some(run))
            }
            Job::Wait(event) => {
                event.stream.wait_for(event.job);
                (Ok(()), None)
            }
            Job::Gate(gate) => {
                gate.open_and_wait();
                (Ok(()), None)
            }
        }
    }

    /// The point after everything enqueued so far, and the time the stream
    /// reaches it: now when it has nothing pending, else when the worker
    /// finishes the last job enqueued.
    fn mark(&self) -> Result<(u64, Arc<OnceLock<Instant>>)> {
        let at = Arc::new(OnceLock::new());
        let mut queue = lock(&self.queue);
        if queue.closed {
            return Err(self.destroyed());
        }
        let job = self.submitted();
        if self.is_complete(job) {
            let _ = at.set(Instant::now());
        } else {
            queue.stamps.push_back((job, Arc::clone(&at)));
        }
        Ok((job, at))
    }

    fn destroyed(&self) -> PluginError {
        PluginError::invalid_argument(format!("sim:{} stream {} is destroyed", self.device, self.id))
    }

    /// Appends `job`; returns its number.
    pub fn enqueue(&self, job: Job) -> Result<u64> {
        let mut queue = lock(&self.queue);
        if queue.closed {
            return Err(self.destroyed());
        }
        queue.spent.clear();
        queue.jobs.push_back(job);
        let number = self.submitted.fetch_add(1, Ordering::AcqRel) + 1;
        let asleep = queue.worker_asleep;
        drop(queue);
        if asleep {
            self.work.notify_one();
        }
        Ok(number)
    }

    /// Enqueues device work; the worker calls `run` once.
    pub fn submit(&self, what: &'static str, run: impl FnMut() -> Result<()> + Send + 'static) -> Result<()> {
        self.enqueue(Job::Work {
            what,
            run: Box::new(run),
        })
        .map(drop)
    }

    /// The number of the last job enqueued so far.
    pub fn submitted(&self) -> u64 {
        self.submitted.load(Ordering::Acquire)
    }

    pub fn is_complete(&self, job: u64) -> bool {
        self.completed.load(Ordering::Acquire) >= job
    }

    /// Blocks until job `job` has completed.
    fn wait_for(&self, job: u64) {
        if watch(|| self.is_complete(job)) {
            return;
        }
        let mut queue = lock(&self.queue);
        queue.waiters += 1;
        while !self.is_complete(job) {
            queue = self.progress.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
        queue.waiters -= 1;
    }

    /// The failure of a job numbered `job` or earlier, taken so that it is
    /// reported once. The caller waited for the stream: the work it ran
    /// is dropped here, on the caller's thread.
    fn take_failure(&self, job: u64) -> Result<()> {
        let mut queue = lock(&self.queue);
        queue.spent.clear();
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

    /// Runs `access` on the calling thread at this point of the stream:
    /// after every job enqueued before it and before any enqueued after it
    /// (a read-back, or a copy in from memory only borrowed for the call).
    /// Returns the failure of an earlier job instead, if there is one.
    pub fn in_order<T>(&self, access: impl FnOnce() -> Result<T>) -> Result<T> {
        let gate = Arc::new(Gate::default());
        let job = self.enqueue(Job::Gate(Arc::clone(&gate)))?;
        // Releases the worker however this returns.
        let _release = Release(&gate);
        gate.wait_open();
        self.take_failure(job - 1)?;
        access()
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
/// position: the worker opens it and waits until it is released. Each
/// side watches for the other before it sleeps (see [`watch`]).
#[derive(Default)]
pub struct Gate {
    opened: AtomicBool,
    released: AtomicBool,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Gate {
    fn open_and_wait(&self) {
        self.set(&self.opened);
        self.wait(&self.released);
    }

    fn wait_open(&self) {
        self.wait(&self.opened);
    }

    fn release(&self) {
        self.set(&self.released);
    }

    fn set(&self, flag: &AtomicBool) {
        {
            // Under the lock, so that a side about to sleep either sees the
            // flag or is asleep when the notification comes.
            let _guard = lock(&self.lock);
            flag.store(true, Ordering::Release);
        }
        self.changed.notify_all();
    }

    fn wait(&self, flag: &AtomicBool) {
        if watch(|| flag.load(Ordering::Acquire)) {
            return;
        }
        let mut guard = lock(&self.lock);
        while !flag.load(Ordering::Acquire) {
            guard = self.changed.wait(guard).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

struct Release<'a>(&'a Gate);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}
