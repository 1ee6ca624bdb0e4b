//! Mid-sized parallel work that never waits for a sleeping thread.
//!
//! A call of some tens of microseconds gains from a second core only if
//! that core starts at once. A rayon worker that is still spinning from
//! its last job starts within a microsecond; one that has gone to sleep
//! takes tens of microseconds to wake, more when its core is busy with
//! another process (docs/performance.md, "On a Zen 3 without AVX-512").
//! `rayon::join` or a parallel iterator would make the caller wait for it.
//!
//! [`run_tasks`] instead lets the calling thread take tasks one by one
//! from a shared counter, and posts helper jobs to the pool that take
//! tasks from the same counter when they start. A helper that starts
//! late finds every task taken and leaves; the caller only ever waits
//! for a task a helper is running, never for a helper to arrive. A helper
//! that did work leaves its thread spinning, so the next call of a loop
//! finds it awake. While helpers keep arriving too late, because other
//! processes hold their cores, calls stop posting them for a while
//! ([`note_arrival`]): on a busy machine a call costs what it costs on
//! one thread.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Calls left that run without helpers, after helpers came too late.
static ALONE: AtomicU32 = AtomicU32::new(0);
/// How many calls the next late arrival sends to run alone: doubled on
/// each one in a row, up to [`MAX_ALONE`], back to 0 once helpers help.
static BACKOFF: AtomicU32 = AtomicU32::new(0);
/// Whether the next post follows a run of calls alone, long enough for
/// idle helpers to have gone to sleep: its miss proves nothing, and the
/// call after it tries again.
static PROBING: AtomicBool = AtomicBool::new(false);
const MAX_ALONE: u32 = 1024;

/// A task body whose borrow has been erased for the helpers: see
/// [`Shared`] for when it may be called.
type Erased = *const (dyn Fn(usize) + Sync + 'static);

/// What the caller and its helpers share. It outlives the call (a late
/// helper may hold it after the caller returns), so it owns everything
/// but `task`.
struct Shared {
    /// The next task to take; at or past `tasks` once all are taken.
    next: AtomicUsize,
    /// Helpers between taking a ticket and finishing its task.
    in_flight: AtomicUsize,
    /// Tasks the helpers ran.
    helped: AtomicUsize,
    tasks: usize,
    task: Erased,
    /// A helper's panic, handed to the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `task` points to a `Sync` closure, so calling it from several
// threads at once is sound, and it is only called while the caller that
// owns the closure waits in `Finish::drop` (see `Shared::help`). The
// other fields are atomics and a mutex.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`.
unsafe impl Sync for Shared {}

impl Shared {
    /// A helper's loop: take tasks until none is left.
    fn help(&self) {
        loop {
            // Counted before taking a ticket, so that a caller that has
            // seen every task taken and no helper in flight knows no
            // helper can still run one.
            self.in_flight.fetch_add(1, SeqCst);
            let t = self.next.fetch_add(1, SeqCst);
            if t >= self.tasks {
                self.in_flight.fetch_sub(1, SeqCst);
                return;
            }
            // SAFETY: `t < tasks` was taken while the caller cannot have
            // returned: it returns only after every ticket is taken and
            // `in_flight` is 0, and this helper holds `in_flight` up
            // until the task is done. So the closure is alive.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*self.task)(t) }));
            self.helped.fetch_add(1, Relaxed);
            if let Err(payload) = result {
                self.panic
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(payload);
                self.next.fetch_max(self.tasks, SeqCst);
            }
            self.in_flight.fetch_sub(1, SeqCst);
        }
    }
}

/// Closes the counter and waits for helpers' running tasks, also when
/// the caller's own task panics, so that no helper uses the closure
/// after the caller's frame is gone.
struct Finish<'a>(&'a Shared);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.next.fetch_max(self.0.tasks, SeqCst);
        let mut spins = 0u32;
        while self.0.in_flight.load(SeqCst) != 0 {
            // A running task is a few microseconds of work.
            if spins < 1_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Runs `task(0)` to `task(tasks - 1)`, each once, on the calling thread
/// and on any of rayon's threads that become free before they are done.
/// Returns when all have run; a panicking task's panic is raised here.
pub(crate) fn run_tasks<F: Fn(usize) + Sync>(tasks: usize, task: F) {
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(tasks.saturating_sub(1));
    let alone = ALONE.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1)).is_ok();
    if helpers == 0 || alone {
        (0..tasks).for_each(task);
        return;
    }
    let body: &(dyn Fn(usize) + Sync + '_) = &task;
    // SAFETY: only the lifetime bound changes (the pointer's layout does
    // not); `Shared::help` calls it only while `task` is alive.
    let erased: Erased = unsafe { std::mem::transmute(body as *const (dyn Fn(usize) + Sync + '_)) };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        in_flight: AtomicUsize::new(0),
        helped: AtomicUsize::new(0),
        tasks,
        task: erased,
        panic: Mutex::new(None),
    });
    for _ in 0..helpers {
        let shared = Arc::clone(&shared);
        rayon::spawn(move || shared.help());
    }
    {
        let _finish = Finish(&shared);
        loop {
            let t = shared.next.fetch_add(1, SeqCst);
            if t >= tasks {
                break;
            }
            task(t);
        }
    }
    note_arrival(shared.helped.load(Relaxed) > 0);
    let payload = shared.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(payload) = payload {
        resume_unwind(payload);
    }
}

/// Backs off from posting helpers while they keep arriving too late
/// because their cores are busy with other processes: posting one costs
/// the caller a wake-up call to the kernel each time. A helper that was
/// only asleep arrives late once and is then awake for a while, so
/// after a run of calls alone one late arrival earns a second try at the
/// next call, and only a second miss backs off further.
fn note_arrival(helped: bool) {
    if helped {
        BACKOFF.store(0, Relaxed);
        PROBING.store(false, Relaxed);
    } else if PROBING.swap(false, Relaxed) {
        ALONE.store(1, Relaxed);
    } else {
        let calls = (BACKOFF.load(Relaxed) * 2).clamp(1, MAX_ALONE);
        BACKOFF.store(calls, Relaxed);
        ALONE.store(calls, Relaxed);
        PROBING.store(calls > 1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::run_tasks;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[test]
    fn every_task_runs_once() {
        for tasks in [0, 1, 2, 7, 1000] {
            let counts: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
            run_tasks(tasks, |t| {
                counts[t].fetch_add(1, SeqCst);
            });
            assert!(counts.iter().all(|c| c.load(SeqCst) == 1), "{tasks} tasks");
        }
    }

    #[test]
    fn a_panicking_task_panics_the_caller_after_the_others_stop() {
        let ran = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(|| {
            run_tasks(64, |t| {
                ran.fetch_add(1, SeqCst);
                if t == 5 {
                    panic!("task 5");
                }
            })
        });
        let message = caught.expect_err("the panic reaches the caller");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"task 5"));
        // Nothing runs after run_tasks has returned.
        let after = ran.load(SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(ran.load(SeqCst), after);
    }
}
