//! Collectives across processes (`anydev.dist`, native submodule
//! `anydev._anydev._dist`): the Rust `anydev-dist` communicator on Python
//! arrays. Built only with the `dist` cargo feature, since it needs MPI.
//!
//! An MPI communicator belongs to the thread that made it (MPI runs
//! `MPI_THREAD_FUNNELED` at least), and `anydev_dist::Communicator` is
//! neither `Send` nor `Sync`. So the communicators live in a registry local
//! to the thread that called `init` (the Python half insists on the main
//! thread); a Python `Communicator` is only a key into it. A call from
//! another thread is a `RuntimeError`, not a crash. A communicator Python
//! drops on another thread is queued and freed on the owning thread's next
//! call. The world stays in the registry until `_finalize` (run at exit),
//! so MPI ends once, after the program and every library beside it have
//! finished with it.
//!
//! The GIL is held while a collective waits: the communicator cannot move
//! to the thread-free closure that releasing it takes.

use crate::array::PyArray;
use crate::device::PyDevice;
use crate::errors::{python_dtype_names, to_py, UnsupportedError};
use anydev_dist::{Communicator, DistError, Engine, ReduceOp};
use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::thread::{self, ThreadId};
use std::time::Duration;

/// The world's key: the first communicator made.
const WORLD: u64 = 0;

/// The thread that called `init`; set once.
static OWNER: OnceLock<ThreadId> = OnceLock::new();

/// Keys of communicators Python dropped on another thread, freed by the
/// owner on its next call.
static DROPPED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

thread_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

#[derive(Default)]
struct Registry {
    comms: HashMap<u64, Communicator>,
    next: u64,
    finalized: bool,
}

impl Registry {
    fn insert(&mut self, comm: Communicator) -> u64 {
        let key = self.next;
        self.next += 1;
        self.comms.insert(key, comm);
        key
    }

    fn free_dropped(&mut self) {
        let keys = std::mem::take(&mut *DROPPED.lock().unwrap_or_else(|e| e.into_inner()));
        for key in keys {
            self.comms.remove(&key);
        }
    }
}

/// The Python exception for a distributed error; the message is the Rust
/// one, with dtypes spelled as in Python.
fn dist_err(e: DistError) -> PyErr {
    let message = python_dtype_names(&e.to_string());
    match e {
        DistError::Array(e) => to_py(e),
        DistError::Timeout { .. } => PyTimeoutError::new_err(message),
        DistError::Unsupported { .. } => UnsupportedError::new_err(message),
        DistError::Config(_) | DistError::Mismatch { .. } | DistError::InvalidInput { .. } => {
            PyValueError::new_err(message)
        }
        DistError::Init(_) | DistError::Placement(_) | DistError::PeerFailed { .. } | DistError::Broken(_) => {
            PyRuntimeError::new_err(message)
        }
    }
}

/// Fails unless called on the thread that owns the communicators.
fn on_owner_thread() -> PyResult<()> {
    match OWNER.get() {
        Some(owner) if *owner == thread::current().id() => Ok(()),
        Some(_) => Err(PyRuntimeError::new_err(
            "anydev.dist communicators are used from the thread that called anydev.dist.init() (MPI calls are \
             funnelled through one thread)",
        )),
        None => Err(PyRuntimeError::new_err("anydev.dist.init() has not been called")),
    }
}

/// A Python integer passed to a collective as a rank, tag or colour of
/// type `T`. One out of `T`'s range (a negative rank, say) is sent as
/// `refused`, the type's largest value, which the collective itself
/// refuses on every rank with a `ValueError`, instead of a conversion
/// error on this rank alone that would leave the others waiting for it;
/// [`Fitted::named`] then puts the caller's value back in that error.
struct Fitted<T> {
    sent: T,
    given: i64,
}

impl<T: TryFrom<i64> + Copy + std::fmt::Display> Fitted<T> {
    fn new(given: i64, refused: T) -> Fitted<T> {
        Fitted {
            sent: T::try_from(given).unwrap_or(refused),
            given,
        }
    }

    /// `result`, its error naming the value the caller gave rather than
    /// the stand-in sent for it.
    fn named<R>(&self, result: PyResult<R>) -> PyResult<R> {
        let (sent, given) = (self.sent.to_string(), self.given.to_string());
        if sent == given {
            return result;
        }
        result.map_err(|e| {
            Python::attach(|py| PyErr::from_type(e.get_type(py), e.value(py).to_string().replace(&sent, &given)))
        })
    }
}

/// Runs `f` on the communicator `key`, on the owning thread.
fn with_comm<T>(key: u64, f: impl FnOnce(&Communicator) -> anydev_dist::Result<T>) -> PyResult<T> {
    on_owner_thread()?;
    REGISTRY.with_borrow_mut(|r| {
        r.free_dropped();
        match r.comms.get(&key) {
            Some(comm) => f(comm).map_err(dist_err),
            None if r.finalized => Err(PyRuntimeError::new_err(
                "the communicator cannot be used: anydev.dist was finalized at exit",
            )),
            None => Err(PyRuntimeError::new_err("the communicator was freed")),
        }
    })
}

/// A group of ranks that exchange anydev arrays (`anydev.dist.init()` and
/// `Communicator.split`). Every call is collective over its ranks except
/// `send` and `recv`; results live on the input's device.
#[pyclass(module = "anydev.dist", name = "Communicator", frozen)]
pub struct PyCommunicator {
    key: u64,
}

impl Drop for PyCommunicator {
    fn drop(&mut self) {
        if self.key == WORLD {
            return;
        }
        // Freed now when on the owning thread and no call holds the
        // registry; otherwise queued for the owner's next call.
        let freed = OWNER.get() == Some(&thread::current().id())
            && REGISTRY
                .try_with(|r| r.try_borrow_mut().map(|mut r| r.comms.remove(&self.key)).is_ok())
                .unwrap_or(false);
        if !freed {
            DROPPED.lock().unwrap_or_else(|e| e.into_inner()).push(self.key);
        }
    }
}

fn reduce_op(name: &str) -> PyResult<ReduceOp> {
    ReduceOp::from_name(name).map_err(dist_err)
}

#[pymethods]
impl PyCommunicator {
    /// This rank's index, `0..size`.
    #[getter]
    fn rank(&self) -> PyResult<usize> {
        with_comm(self.key, |c| Ok(c.rank()))
    }

    /// The number of ranks.
    #[getter]
    fn size(&self) -> PyResult<usize> {
        with_comm(self.key, |c| Ok(c.size()))
    }

    /// This process's index among the ranks on its node.
    #[getter]
    fn local_rank(&self) -> PyResult<usize> {
        with_comm(self.key, |c| Ok(c.local_rank()))
    }

    /// This rank's device: where `recv` puts arrays.
    #[getter]
    fn device(&self) -> PyResult<PyDevice> {
        with_comm(self.key, |c| Ok(PyDevice(c.device())))
    }

    /// Seconds any wait may last before a call raises `TimeoutError`.
    #[getter]
    fn timeout(&self) -> PyResult<f64> {
        with_comm(self.key, |c| Ok(c.timeout().as_secs_f64()))
    }

    #[setter]
    fn set_timeout(&self, seconds: f64) -> PyResult<()> {
        let timeout = Duration::try_from_secs_f64(seconds)
            .map_err(|_| PyValueError::new_err(format!("timeout: {seconds} is not a positive number of seconds")))?;
        with_comm(self.key, |c| c.set_timeout(timeout))
    }

    /// The engine per device kind (`"*"` for every other kind).
    fn engines<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let entries = with_comm(self.key, |c| Ok(c.engines().entries()))?;
        let out = PyDict::new(py);
        for (kind, engine) in entries {
            out.set_item(kind, engine.name())?;
        }
        Ok(out)
    }

    /// Routes arrays of device kind `kind` (`"*"` for every kind not
    /// listed) through `engine` (`"mpi"`, `"nccl"`, `"plugin"`).
    fn set_engine(&self, kind: &str, engine: &str) -> PyResult<()> {
        let engine: Engine = engine.parse().map_err(dist_err)?;
        with_comm(self.key, |c| c.set_engine(kind, engine))
    }

    /// One line: rank, device, how its arrays travel, MPI library, timeout.
    fn describe(&self) -> PyResult<String> {
        with_comm(self.key, |c| Ok(c.describe()))
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("anydev.dist.Communicator({})", self.describe()?))
    }

    #[pyo3(signature = (x, /, op = "sum"))]
    fn all_reduce(&self, x: &PyArray, op: &str) -> PyResult<PyArray> {
        let op = reduce_op(op)?;
        with_comm(self.key, |c| c.all_reduce(&x.inner, op)).map(PyArray::from)
    }

    #[pyo3(signature = (x, /, op = "sum"))]
    fn reduce_scatter(&self, x: &PyArray, op: &str) -> PyResult<PyArray> {
        let op = reduce_op(op)?;
        with_comm(self.key, |c| c.reduce_scatter(&x.inner, op)).map(PyArray::from)
    }

    #[pyo3(signature = (x, /, root = 0))]
    fn broadcast(&self, x: &PyArray, root: i64) -> PyResult<PyArray> {
        let root = Fitted::new(root, usize::MAX);
        root.named(with_comm(self.key, |c| c.broadcast(&x.inner, root.sent)))
            .map(PyArray::from)
    }

    fn all_gather(&self, x: &PyArray) -> PyResult<PyArray> {
        with_comm(self.key, |c| c.all_gather(&x.inner)).map(PyArray::from)
    }

    fn all_to_all(&self, x: &PyArray) -> PyResult<PyArray> {
        with_comm(self.key, |c| c.all_to_all(&x.inner)).map(PyArray::from)
    }

    #[pyo3(signature = (x, /, dest, tag = 0))]
    fn send(&self, x: &PyArray, dest: i64, tag: i64) -> PyResult<()> {
        let (dest, tag) = (Fitted::new(dest, usize::MAX), Fitted::new(tag, i32::MAX));
        tag.named(dest.named(with_comm(self.key, |c| c.send(&x.inner, dest.sent, tag.sent))))
    }

    #[pyo3(signature = (source, tag = 0))]
    fn recv(&self, source: i64, tag: i64) -> PyResult<PyArray> {
        let (source, tag) = (Fitted::new(source, usize::MAX), Fitted::new(tag, i32::MAX));
        tag.named(source.named(with_comm(self.key, |c| c.recv(source.sent, tag.sent))))
            .map(PyArray::from)
    }

    fn barrier(&self) -> PyResult<()> {
        with_comm(self.key, |c| c.barrier())
    }

    /// The ranks that pass the same `colour`, ordered by `key` then rank.
    #[pyo3(signature = (colour, key = 0))]
    fn split(&self, colour: i64, key: i64) -> PyResult<PyCommunicator> {
        // Keys only order the ranks: one beyond 32 bits orders as the
        // nearest 32-bit value (then by rank), rather than failing this rank
        // alone while the others wait in the split.
        let key = key.clamp(i32::MIN.into(), i32::MAX.into()) as i32;
        let colour = Fitted::new(colour, u32::MAX);
        let part = colour.named(with_comm(self.key, |c| c.split(colour.sent, key)))?;
        let key = REGISTRY.with_borrow_mut(|r| r.insert(part));
        Ok(PyCommunicator { key })
    }

    /// Ends every rank of the job with exit code `code` (MPI_Abort): what to
    /// do after a `TimeoutError`, since a peer may be gone.
    #[pyo3(signature = (code = 1))]
    fn abort(&self, code: i32) -> PyResult<()> {
        with_comm(self.key, |c| c.abort(code))
    }
}

/// Starts MPI (or joins the MPI mpi4py started), picks this rank's device
/// and returns the world communicator. Once per process.
#[pyfunction]
fn init() -> PyResult<PyCommunicator> {
    let here = thread::current().id();
    if *OWNER.get_or_init(|| here) != here {
        return Err(PyRuntimeError::new_err(
            "anydev.dist.init() was already called on another thread",
        ));
    }
    REGISTRY.with_borrow_mut(|r| {
        if r.finalized || r.comms.contains_key(&WORLD) {
            return Err(PyRuntimeError::new_err(
                "anydev.dist.init() was already called in this process; use the communicator it returned \
                 (anydev.dist.world()) or split it",
            ));
        }
        let world = anydev_dist::init().map_err(dist_err)?;
        Ok(PyCommunicator { key: r.insert(world) })
    })
}

/// The world communicator `init` returned.
#[pyfunction]
fn world() -> PyResult<PyCommunicator> {
    with_comm(WORLD, |_| Ok(()))?;
    Ok(PyCommunicator { key: WORLD })
}

/// Frees every communicator, which ends MPI if `init` started it (MPI
/// ends with the last communicator over it). Registered with `atexit` by the Python half; later calls raise.
#[pyfunction]
fn _finalize() -> PyResult<()> {
    on_owner_thread()?;
    REGISTRY.with_borrow_mut(|r| {
        r.comms.clear();
        r.finalized = true;
    });
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let module = PyModule::new(m.py(), "_dist")?;
    module.add_class::<PyCommunicator>()?;
    module.add_function(wrap_pyfunction!(init, &module)?)?;
    module.add_function(wrap_pyfunction!(world, &module)?)?;
    module.add_function(wrap_pyfunction!(_finalize, &module)?)?;
    m.add_submodule(&module)
}
