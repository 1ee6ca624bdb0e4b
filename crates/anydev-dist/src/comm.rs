//! The communicator: collectives and point-to-point transfers on arrays.

mod native;

use crate::engine::{self, EngineTable, Route};
use crate::error::{DistError, Result};
use crate::meta::{self, Agree, Call, Meta, MAX_DIMS, RECORD};
use crate::placement;
use crate::wait::{complete, lease, Completed, Stalled};
use anydev::collective::{CollectiveKind, DeviceComm};
use anydev::{Array, DType, Device, DeviceGuard, DeviceKind, Element};
use mpi::collective::SystemOperation;
use mpi::request::StaticScope;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator as _, CommunicatorCollectives, Destination, Equivalence, Root, Source};
use native::{dense, device_reduce, Plan};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The variable that bounds every wait, in seconds.
pub const TIMEOUT_VAR: &str = "ANYDEV_DIST_TIMEOUT";
/// The timeout when `ANYDEV_DIST_TIMEOUT` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest user tag for [`Communicator::send`] (MPI guarantees at least this).
pub const MAX_TAG: i32 = 32767;

/// How [`Communicator::all_reduce`] and [`Communicator::reduce_scatter`]
/// combine the ranks' arrays.
///
/// `Mean` is for float dtypes only. On `bool`, `Sum` and `Max` are logical
/// or, `Prod` and `Min` logical and (NumPy's `add`/`multiply` on bools).
/// `f16` and `bf16` are reduced in `f32` and rounded once at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum = 1,
    Prod = 2,
    Min = 3,
    Max = 4,
    Mean = 5,
}

impl ReduceOp {
    pub const ALL: [ReduceOp; 5] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::Mean,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Mean => "mean",
        }
    }

    /// The op named `name` (`"sum"`, ..., as [`ReduceOp::name`] gives).
    pub fn from_name(name: &str) -> Result<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|op| op.name() == name).ok_or_else(|| {
            DistError::invalid(
                "reduce",
                format!("unknown op {name:?}; the ops are sum, prod, min, max and mean"),
            )
        })
    }

    fn code_name(code: u8) -> String {
        match ReduceOp::ALL.iter().find(|op| **op as u8 == code) {
            Some(op) => op.name().into(),
            None => "none".into(),
        }
    }

    /// The MPI operation for values of `dtype` (after f16/bf16 became f32).
    fn mpi_op(self, dtype: DType) -> SystemOperation {
        match (self, dtype) {
            (ReduceOp::Sum | ReduceOp::Max, DType::Bool) => SystemOperation::logical_or(),
            (ReduceOp::Prod | ReduceOp::Min, DType::Bool) => SystemOperation::logical_and(),
            (ReduceOp::Sum | ReduceOp::Mean, _) => SystemOperation::sum(),
            (ReduceOp::Prod, _) => SystemOperation::product(),
            (ReduceOp::Min, _) => SystemOperation::min(),
            (ReduceOp::Max, _) => SystemOperation::max(),
        }
    }
}

/// The dtype a reduction travels in: f16 and bf16 have no MPI type and go as f32.
fn wire_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// What a collective is, apart from its array.
struct Head {
    call: Call,
    reduce: Option<ReduceOp>,
    root: i32,
}

/// State shared by a world communicator and every communicator split from it.
struct Shared {
    /// The device scope this rank's device was set as; dropped with the
    /// last communicator. Declared first: it is restored before MPI ends.
    scope: RefCell<Option<DeviceGuard>>,
    /// Set by the first timeout; every later call fails with it.
    broken: RefCell<Option<String>>,
    library: String,
    universe: Option<mpi::environment::Universe>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.scope.borrow_mut().take();
        // After a timeout a peer may be gone, and MPI_Finalize would wait
        // for it forever: leave MPI without finalizing (the launcher then
        // reports this rank as failed, which it has).
        if self.broken.borrow().is_some() {
            if let Some(universe) = self.universe.take() {
                std::mem::forget(universe);
            }
        }
        if let Some(universe) = self.universe.take() {
            drop(universe);
            OWN_MPI.store(false, Ordering::Release);
        }
    }
}

/// A group of ranks that exchange arrays.
///
/// Made by [`crate::init`] (all ranks) and [`Communicator::split`]. Every
/// call is collective over the communicator's ranks except
/// [`Communicator::send`] and [`Communicator::recv`]. A communicator is
/// used from the thread that made it (it is neither `Send` nor `Sync`).
pub struct Communicator {
    /// The data moves here.
    comm: MpiComm,
    /// Metadata and message headers move here, apart from the data.
    ctrl: MpiComm,
    rank: usize,
    size: usize,
    device: Device,
    local_rank: usize,
    local_rank_source: String,
    seq: Cell<u64>,
    timeout: Cell<Duration>,
    engines: RefCell<EngineTable>,
    /// The device library's communicator over the same ranks, for the
    /// `plugin` engine; joined on first use.
    device_comm: RefCell<Option<Rc<dyn DeviceComm>>>,
    shared: Rc<Shared>,
}

/// An MPI communicator, freed on drop only while MPI still runs. Where
/// another library owns MPI and finalized it first, freeing would abort the
/// process; the handle ended with MPI anyway.
struct MpiComm(Option<SimpleCommunicator>);

impl std::ops::Deref for MpiComm {
    type Target = SimpleCommunicator;

    fn deref(&self) -> &SimpleCommunicator {
        self.0.as_ref().expect("taken only when dropped")
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        if mpi::environment::is_finalized() {
            std::mem::forget(self.0.take());
        }
    }
}

/// A collective's input, ready for its engine.
enum Staged<H> {
    /// Copied to the host for MPI.
    Host(H),
    /// Dense on the device, for the device's own collectives.
    Device(Array),
}

/// Starts MPI, or joins the MPI another library of this process started
/// (mpi4py, the application's own `mpi::initialize`). Only MPI that this
/// call started is returned, to be finalized when the last communicator
/// drops; MPI started elsewhere is left for its owner to finalize.
fn start_mpi() -> Result<Option<mpi::environment::Universe>> {
    if OWN_MPI.load(Ordering::Acquire) {
        return Err(DistError::Init(
            "MPI is already initialised by an earlier anydev_dist::init whose communicators are still alive; \
             call init once and split the communicator it returns"
                .into(),
        ));
    }
    if mpi::environment::is_finalized() {
        return Err(DistError::Init(
            "MPI has already been finalized in this process, and it cannot be started twice; keep the \
             first communicator (or one split from it) for the life of the program"
                .into(),
        ));
    }
    if mpi::environment::is_initialized() {
        return Ok(None);
    }
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| DistError::Init("MPI_Init_thread failed".into()))?;
    OWN_MPI.store(true, Ordering::Release);
    Ok(Some(universe))
}

/// Whether MPI was started by [`init`] and is not yet finalized: a second
/// `init` would otherwise join it and outlive the finalize of the first.
static OWN_MPI: AtomicBool = AtomicBool::new(false);

/// Reads `ANYDEV_DIST_TIMEOUT` (seconds, fractions allowed).
pub fn timeout_from_env() -> Result<Duration> {
    match std::env::var(TIMEOUT_VAR) {
        Err(_) => Ok(DEFAULT_TIMEOUT),
        Ok(s) => parse_timeout(&s).map_err(|e| DistError::Config(format!("{TIMEOUT_VAR}={s:?}: {e}"))),
    }
}

fn parse_timeout(s: &str) -> std::result::Result<Duration, String> {
    let secs: f64 = s.trim().parse().map_err(|_| "not a number of seconds".to_string())?;
    if !(secs > 0.0 && secs.is_finite() && secs < 1e9) {
        return Err("the timeout must be a positive number of seconds below 1e9".into());
    }
    match Duration::from_secs_f64(secs) {
        d if d.is_zero() => Err("the timeout rounds to zero; the smallest is 1e-9 seconds".into()),
        d => Ok(d),
    }
}

/// Starts MPI and returns the world communicator, with this rank's device
/// chosen (see [`crate::placement`]) and set as the default device for
/// creation calls on this thread while the communicator lives.
///
/// Call once per process, on the thread that will make the distributed
/// calls. Every rank must call it; a rank that fails to choose a device
/// makes every rank fail with an error naming it.
///
/// Where another library of the process already started MPI (mpi4py, the
/// application's own `mpi::initialize`), the communicator joins that MPI's
/// world and leaves finalizing to its owner, who must drop every anydev
/// communicator first. Otherwise MPI is started here (`MPI_THREAD_FUNNELED`)
/// and finalized when the last communicator drops.
pub fn init() -> Result<Communicator> {
    let engines = EngineTable::from_env()?;
    let timeout = timeout_from_env()?;
    let share = placement::share_override(|k| std::env::var(k).ok())?;
    let kind_override = match std::env::var(placement::KIND_VAR) {
        Ok(k) => Some(
            DeviceKind::parse(k.trim())
                .map_err(|_| DistError::Config(format!("{}={k:?} is not a device kind name", placement::KIND_VAR)))?,
        ),
        Err(_) => None,
    };
    let universe = start_mpi()?;
    let library = mpi::environment::library_version()
        .ok()
        .and_then(|v| v.split(',').next().map(|s| s.trim().to_owned()))
        .unwrap_or_else(|| "MPI".into());
    let world = SimpleCommunicator::world();
    let rank = world.rank() as usize;
    // The ranks on this node. Freed right away: a communicator must not
    // outlive MPI, which ends when the returned one (or an error) drops.
    let (node_rank, node_size) = {
        let node = world.split_shared(world.rank());
        (node.rank() as usize, node.size() as usize)
    };
    // A malformed launcher variable fails the device choice below, on
    // every rank, rather than this rank alone.
    let launcher = placement::launcher_local_rank(|k| std::env::var(k).ok());
    let (local_rank, local_rank_source) = match &launcher {
        Ok(Some((r, var))) => (*r, (*var).to_owned()),
        Ok(None) => (node_rank, "MPI's node-local split".to_owned()),
        Err(_) => (0, "a malformed launcher variable".to_owned()),
    };
    let comm = Communicator {
        comm: MpiComm(Some(world.duplicate())),
        ctrl: MpiComm(Some(world.duplicate())),
        rank,
        size: world.size() as usize,
        device: Device::cpu(),
        local_rank,
        local_rank_source,
        seq: Cell::new(0),
        timeout: Cell::new(timeout),
        engines: RefCell::new(engines),
        device_comm: RefCell::new(None),
        shared: Rc::new(Shared {
            scope: RefCell::new(None),
            broken: RefCell::new(None),
            library,
            universe,
        }),
    };
    // Choose the device, then agree: a rank that could not choose makes
    // every rank fail, naming it, instead of leaving the others waiting.
    let chosen = (|| -> Result<(Device, Route)> {
        launcher?;
        let runtime = anydev::runtime();
        let kind = match kind_override {
            Some(kind) => kind,
            None => runtime.default_device()?.kind(),
        };
        let devices: Vec<Device> = runtime.devices().into_iter().filter(|d| d.kind() == kind).collect();
        let host_memory = match devices.first() {
            Some(d) => runtime
                .capabilities(*d)?
                .flag(anydev::capability::keys::HOST_ACCESSIBLE_MEMORY),
            None => false,
        };
        let device = placement::choose(comm.local_rank, node_size, kind, devices.len(), host_memory || share)?;
        let route = engine::route(&comm.engines.borrow(), device)?;
        Ok((device, route))
    })();
    let seq = comm.begin()?;
    let mut meta = Meta::new(Call::Init, seq);
    meta.error = chosen.as_ref().err().map(ToString::to_string);
    let agreed = comm.exchange(&meta, Agree { shape: false });
    let (device, _) = chosen?;
    agreed?;
    let mut comm = comm;
    comm.device = device;
    *comm.shared.scope.borrow_mut() = Some(DeviceGuard::new(device));
    Ok(comm)
}

impl Communicator {
    /// This rank's index, `0..size()`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// This rank's device: where [`Communicator::recv`] puts arrays, and the
    /// default device for creation calls (set by [`crate::init`]).
    pub fn device(&self) -> Device {
        self.device
    }

    /// This process's index among the ranks on its node.
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// How long any wait may last before the call fails with
    /// [`DistError::Timeout`].
    pub fn timeout(&self) -> Duration {
        self.timeout.get()
    }

    /// Sets the timeout for later calls on this communicator. Every rank
    /// should use the same value.
    pub fn set_timeout(&self, timeout: Duration) -> Result<()> {
        if timeout.is_zero() {
            return Err(DistError::Config("the timeout must be positive".into()));
        }
        self.timeout.set(timeout);
        Ok(())
    }

    /// The engine table this communicator routes arrays by.
    pub fn engines(&self) -> EngineTable {
        self.engines.borrow().clone()
    }

    /// Routes arrays of device kind `kind` (`*` for every kind not listed)
    /// through `engine`; an engine this build lacks is an error saying why.
    pub fn set_engine(&self, kind: &str, engine: crate::Engine) -> Result<()> {
        self.engines.borrow_mut().set(kind, engine)
    }

    /// How arrays on `device` travel: engine and host staging.
    pub fn route(&self, device: Device) -> Result<Route> {
        engine::route(&self.engines.borrow(), device)
    }

    /// One line for logs: rank, device and how its arrays travel, the MPI
    /// library and the timeout, e.g.
    /// `rank 1 of 4 (local rank 1 from OMPI_COMM_WORLD_LOCAL_RANK): sim:1 via mpi (host staging); Open MPI v4.1.4; timeout 300 s`.
    pub fn describe(&self) -> String {
        let route = match self.route(self.device) {
            Ok(route) => route.to_string(),
            Err(e) => format!("no route ({e})"),
        };
        format!(
            "rank {} of {} (local rank {} from {}): {} via {}; {}; timeout {} s",
            self.rank,
            self.size,
            self.local_rank,
            self.local_rank_source,
            self.device,
            route,
            self.shared.library,
            self.timeout.get().as_secs_f64()
        )
    }

    /// Ends every rank of the job with `code` (MPI_Abort): what to do after
    /// a [`DistError::Timeout`], since a peer may be gone.
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }

    /// Checks the communicator still works and numbers the next collective.
    fn begin(&self) -> Result<u64> {
        if let Some(why) = self.shared.broken.borrow().as_ref() {
            return Err(DistError::Broken(why.clone()));
        }
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        Ok(seq)
    }

    /// Marks the communicator unusable after a wait ran out.
    fn stalled(&self, call: Call, seq: u64, phase: &'static str) -> DistError {
        let error = DistError::Timeout {
            op: call.name().into(),
            seq,
            rank: self.rank,
            phase,
            timeout: self.timeout.get(),
        };
        self.shared.broken.borrow_mut().get_or_insert_with(|| error.to_string());
        error
    }

    fn wait<D: ?Sized>(
        &self,
        request: mpi::request::Request<'static, D, StaticScope>,
        call: Call,
        seq: u64,
        phase: &'static str,
    ) -> Result<Completed> {
        complete(request, self.timeout.get()).map_err(|Stalled| self.stalled(call, seq, phase))
    }

    /// Exchanges `meta` with every rank and checks that they agree.
    fn exchange(&self, meta: &Meta, agree: Agree) -> Result<()> {
        let (send_lease, send) = lease(meta.encode().to_vec());
        let (recv_lease, recv) = lease(vec![0u8; RECORD * self.size]);
        let send: &'static [u8] = send;
        let request = self.ctrl.immediate_all_gather_into(StaticScope, send, recv);
        let done = self.wait(request, meta.call, meta.seq, "exchanging metadata with the other ranks")?;
        send_lease.reclaim(&done);
        let all = recv_lease.reclaim(&done);
        let mut records = Vec::with_capacity(self.size);
        for (rank, record) in all.chunks_exact(RECORD).enumerate() {
            match Meta::decode(record) {
                Some(m) => records.push(m),
                None => {
                    return Err(DistError::PeerFailed {
                        op: meta.call.name().into(),
                        seq: meta.seq,
                        rank,
                        message: "it sent metadata this version of anydev-dist cannot read (are all ranks \
                                  running the same program?)"
                            .into(),
                    })
                }
            }
        }
        meta::compare(&records, agree, ReduceOp::code_name)
    }

    /// The common shape of a collective: local preparation (validation and
    /// staging to the host) on every rank, then the metadata exchange, whose
    /// failure or mismatch every rank reports, then `data`.
    fn collective<S, R>(
        &self,
        Head { call, reduce, root }: Head,
        x: Option<&Array>,
        agree: Agree,
        prepare: impl FnOnce() -> Result<S>,
        data: impl FnOnce(S, u64) -> Result<R>,
    ) -> Result<R> {
        let seq = self.begin()?;
        let prepared = prepare();
        let mut meta = Meta::new(call, seq);
        meta.reduce = reduce.map_or(0, |op| op as u8);
        meta.root = root;
        if let Some(x) = x {
            meta.dtype = Some(x.dtype());
            meta.shape = (x.ndim() <= MAX_DIMS).then(|| x.shape().to_vec());
            meta.kind = x.device().kind().as_str().to_owned();
            meta.engine = self.route(x.device()).ok().map(|route| route.engine);
        }
        meta.error = prepared.as_ref().err().map(ToString::to_string);
        let agreed = self.exchange(&meta, agree);
        let staged = prepared?;
        agreed?;
        data(staged, seq)
    }

    /// Local checks every array collective makes.
    fn check_array(&self, op: &str, x: &Array) -> Result<()> {
        if x.ndim() > MAX_DIMS {
            return Err(DistError::invalid(
                op,
                format!("arrays of at most {MAX_DIMS} dimensions, got {}", x.ndim()),
            ));
        }
        // A route exists only through an engine the device can use.
        self.route(x.device())?;
        Ok(())
    }

    /// `x` ready for its route: dense on this rank's device for a device
    /// engine (the device communicator is joined there, so an array on
    /// another device of the kind is copied over, and its result copied
    /// back), else `host()`'s copy for MPI.
    fn stage<H>(&self, x: &Array, host: impl FnOnce() -> Result<H>) -> Result<Staged<H>> {
        if self.route(x.device())?.engine.is_device_native() {
            let here = if x.device() == self.device {
                x.clone()
            } else {
                x.to_device(self.device)?
            };
            Ok(Staged::Device(dense(&here)?))
        } else {
            host().map(Staged::Host)
        }
    }

    /// Every rank's arrays combined with `op`; the result has the input's
    /// shape and dtype and lives on its device.
    pub fn all_reduce(&self, x: &Array, op: ReduceOp) -> Result<Array> {
        let call = Call::AllReduce;
        self.collective(
            Head {
                call,
                reduce: Some(op),
                root: -1,
            },
            Some(x),
            Agree { shape: true },
            || {
                self.check_array(call.name(), x)?;
                check_reduce(call.name(), x.dtype(), op)?;
                self.stage(x, || HostVec::stage(call.name(), x))
            },
            |staged, seq| match staged {
                Staged::Host(host) => {
                    let reduced = host.reduce(self, call, seq, op, None)?;
                    self.finish_reduce(x, reduced, x.shape(), op)
                }
                Staged::Device(xd) => {
                    let xd = reduced_form(xd, op)?;
                    let plan = Plan {
                        kind: CollectiveKind::AllReduce(device_reduce(op)),
                        send: Some(&xd),
                        count: xd.size(),
                        out_shape: x.shape().to_vec(),
                        dtype: xd.dtype(),
                        home: x.device(),
                    };
                    self.finish_device_reduce(self.run_on_device(call, seq, plan)?, op, x.dtype())
                }
            },
        )
    }

    /// Every rank's arrays combined with `op`, split along axis 0: rank `r`
    /// gets block `r` of `shape[0] / size` rows. `shape[0]` must be a
    /// multiple of the number of ranks.
    pub fn reduce_scatter(&self, x: &Array, op: ReduceOp) -> Result<Array> {
        let call = Call::ReduceScatter;
        self.collective(
            Head {
                call,
                reduce: Some(op),
                root: -1,
            },
            Some(x),
            Agree { shape: true },
            || {
                self.check_array(call.name(), x)?;
                check_reduce(call.name(), x.dtype(), op)?;
                self.check_blocks(call.name(), x)?;
                self.stage(x, || HostVec::stage(call.name(), x))
            },
            |staged, seq| {
                let mut shape = x.shape().to_vec();
                shape[0] /= self.size;
                match staged {
                    Staged::Host(host) => {
                        let reduced = host.reduce(self, call, seq, op, Some(self.size))?;
                        self.finish_reduce(x, reduced, &shape, op)
                    }
                    Staged::Device(xd) => {
                        let xd = reduced_form(xd, op)?;
                        let plan = Plan {
                            kind: CollectiveKind::ReduceScatter(device_reduce(op)),
                            send: Some(&xd),
                            count: xd.size() / self.size,
                            out_shape: shape,
                            dtype: xd.dtype(),
                            home: x.device(),
                        };
                        self.finish_device_reduce(self.run_on_device(call, seq, plan)?, op, x.dtype())
                    }
                }
            },
        )
    }

    fn check_blocks(&self, op: &str, x: &Array) -> Result<()> {
        match x.shape().first() {
            Some(rows) if rows % self.size == 0 => Ok(()),
            Some(rows) => Err(DistError::invalid(
                op,
                format!(
                    "axis 0 has length {rows}, which does not split into {} equal blocks (one per rank)",
                    self.size
                ),
            )),
            None => Err(DistError::invalid(op, "needs an array of at least one dimension")),
        }
    }

    /// A device reduction finished: a mean divided by the number of ranks,
    /// in the input's `dtype`.
    fn finish_device_reduce(&self, summed: Array, op: ReduceOp, dtype: DType) -> Result<Array> {
        if op != ReduceOp::Mean {
            return Ok(summed);
        }
        let mean = summed.divide(self.size as f64)?;
        Ok(if mean.dtype() == dtype {
            mean
        } else {
            mean.astype(dtype)?
        })
    }

    /// The reduced host data back on `x`'s device, in `x`'s dtype.
    fn finish_reduce(&self, x: &Array, reduced: HostVec, shape: &[usize], op: ReduceOp) -> Result<Array> {
        let mut out = reduced.into_array(shape, x.device())?;
        if op == ReduceOp::Mean {
            out = out.divide(self.size as f64)?;
        }
        if out.dtype() != x.dtype() {
            out = out.astype(x.dtype())?;
        }
        Ok(out)
    }

    /// The root's array on every rank. Other ranks pass an array of the
    /// same shape and dtype (its values are not read); the result lives on
    /// each rank's input device. On the root the result is the input.
    pub fn broadcast(&self, x: &Array, root: usize) -> Result<Array> {
        let call = Call::Broadcast;
        self.collective(
            Head {
                call,
                reduce: None,
                root: root.min(i32::MAX as usize) as i32,
            },
            Some(x),
            Agree { shape: true },
            || {
                self.check_array(call.name(), x)?;
                self.check_rank(call.name(), "root", root)?;
                let bytes = byte_count(call.name(), x)?;
                self.stage(x, || match self.rank == root {
                    true => Ok(x.host_bytes()?),
                    false => Ok(vec![0u8; bytes]),
                })
            },
            |staged, seq| {
                let bytes = match staged {
                    Staged::Host(bytes) => bytes,
                    Staged::Device(xd) => {
                        let plan = Plan {
                            kind: CollectiveKind::Broadcast { root },
                            send: (self.rank == root).then_some(&xd),
                            count: xd.size(),
                            out_shape: x.shape().to_vec(),
                            dtype: x.dtype(),
                            home: x.device(),
                        };
                        let out = self.run_on_device(call, seq, plan)?;
                        return Ok(if self.rank == root { x.clone() } else { out });
                    }
                };
                let (l, buf) = lease(bytes);
                let request = self
                    .comm
                    .process_at_rank(root as i32)
                    .immediate_broadcast_into(StaticScope, buf);
                let done = self.wait(request, call, seq, "broadcasting")?;
                let bytes = l.reclaim(&done);
                if self.rank == root {
                    Ok(x.clone())
                } else {
                    array_from_bytes(x.dtype(), x.shape(), &bytes, x.device())
                }
            },
        )
    }

    /// Every rank's array, stacked along a new axis 0 in rank order: shape
    /// `[size, ...x.shape]`, on `x`'s device.
    pub fn all_gather(&self, x: &Array) -> Result<Array> {
        let call = Call::AllGather;
        self.collective(
            Head {
                call,
                reduce: None,
                root: -1,
            },
            Some(x),
            Agree { shape: true },
            || {
                self.check_array(call.name(), x)?;
                let n = byte_count(call.name(), x)?;
                byte_count_total(call.name(), n, self.size)?;
                self.stage(x, || Ok(x.host_bytes()?))
            },
            |staged, seq| {
                let mut shape = vec![self.size];
                shape.extend_from_slice(x.shape());
                let bytes = match staged {
                    Staged::Host(bytes) => bytes,
                    Staged::Device(xd) => {
                        let plan = Plan {
                            kind: CollectiveKind::AllGather,
                            send: Some(&xd),
                            count: xd.size(),
                            out_shape: shape,
                            dtype: x.dtype(),
                            home: x.device(),
                        };
                        return self.run_on_device(call, seq, plan);
                    }
                };
                let total = bytes.len() * self.size;
                let (sl, send) = lease(bytes);
                let (rl, recv) = lease(vec![0u8; total]);
                let send: &'static [u8] = send;
                let request = self.comm.immediate_all_gather_into(StaticScope, send, recv);
                let done = self.wait(request, call, seq, "gathering")?;
                sl.reclaim(&done);
                let gathered = rl.reclaim(&done);
                array_from_bytes(x.dtype(), &shape, &gathered, x.device())
            },
        )
    }

    /// Block `j` of axis 0 (of `shape[0] / size` rows) goes to rank `j`;
    /// block `i` of the result came from rank `i`. Same shape as `x`.
    pub fn all_to_all(&self, x: &Array) -> Result<Array> {
        let call = Call::AllToAll;
        self.collective(
            Head {
                call,
                reduce: None,
                root: -1,
            },
            Some(x),
            Agree { shape: true },
            || {
                self.check_array(call.name(), x)?;
                self.check_blocks(call.name(), x)?;
                byte_count(call.name(), x)?;
                self.stage(x, || Ok(x.host_bytes()?))
            },
            |staged, seq| {
                let bytes = match staged {
                    Staged::Host(bytes) => bytes,
                    Staged::Device(xd) => {
                        let plan = Plan {
                            kind: CollectiveKind::AllToAll,
                            send: Some(&xd),
                            count: xd.size() / self.size,
                            out_shape: x.shape().to_vec(),
                            dtype: x.dtype(),
                            home: x.device(),
                        };
                        return self.run_on_device(call, seq, plan);
                    }
                };
                let n = bytes.len();
                let (sl, send) = lease(bytes);
                let (rl, recv) = lease(vec![0u8; n]);
                let send: &'static [u8] = send;
                let request = self.comm.immediate_all_to_all_into(StaticScope, send, recv);
                let done = self.wait(request, call, seq, "exchanging blocks")?;
                sl.reclaim(&done);
                let out = rl.reclaim(&done);
                array_from_bytes(x.dtype(), x.shape(), &out, x.device())
            },
        )
    }

    /// Returns once every rank has called it (or fails after the timeout).
    pub fn barrier(&self) -> Result<()> {
        self.collective(
            Head {
                call: Call::Barrier,
                reduce: None,
                root: -1,
            },
            None,
            Agree { shape: false },
            || Ok(()),
            |(), _| Ok(()),
        )
    }

    /// Splits the ranks into groups by `colour`, ordered within a group by
    /// `key` (ties by rank), like `MPI_Comm_split`. Every rank gets the
    /// communicator of its group; the device, timeout and engine table stay.
    pub fn split(&self, colour: u32, key: i32) -> Result<Communicator> {
        let call = Call::Split;
        self.collective(
            Head {
                call,
                reduce: None,
                root: -1,
            },
            None,
            Agree { shape: false },
            || {
                i32::try_from(colour).map_err(|_| {
                    DistError::invalid(call.name(), format!("colour {colour} is outside 0..={}", i32::MAX))
                })
            },
            |colour, _| {
                // MPI has no non-blocking split; the exchange just above
                // showed every rank is here, so this returns promptly.
                let split = |c: &SimpleCommunicator| {
                    c.split_by_color_with_key(Color::with_value(colour), key)
                        .ok_or_else(|| DistError::invalid(call.name(), "MPI returned no communicator"))
                };
                let comm = split(&self.comm)?;
                let ctrl = split(&self.ctrl)?;
                Ok(Communicator {
                    rank: comm.rank() as usize,
                    size: comm.size() as usize,
                    comm: MpiComm(Some(comm)),
                    ctrl: MpiComm(Some(ctrl)),
                    device: self.device,
                    local_rank: self.local_rank,
                    local_rank_source: self.local_rank_source.clone(),
                    seq: Cell::new(0),
                    timeout: Cell::new(self.timeout.get()),
                    engines: RefCell::new(self.engines.borrow().clone()),
                    device_comm: RefCell::new(None),
                    shared: Rc::clone(&self.shared),
                })
            },
        )
    }

    fn check_rank(&self, op: &str, what: &str, rank: usize) -> Result<()> {
        if rank >= self.size {
            return Err(DistError::invalid(
                op,
                format!(
                    "{what} {rank} is not a rank of this communicator (it has {} ranks)",
                    self.size
                ),
            ));
        }
        Ok(())
    }

    fn check_tag(op: &str, tag: i32) -> Result<()> {
        if !(0..=MAX_TAG).contains(&tag) {
            return Err(DistError::invalid(op, format!("tag {tag} is outside 0..={MAX_TAG}")));
        }
        Ok(())
    }

    /// Sends `x` to rank `dest`, which receives it with
    /// [`Communicator::recv`] with the same tag. Returns when the data has
    /// left (for large arrays: when `dest` has started receiving), or fails
    /// after the timeout. A failure here (a bad array) is sent to `dest` too,
    /// so its `recv` fails instead of waiting.
    pub fn send(&self, x: &Array, dest: usize, tag: i32) -> Result<()> {
        let op = "send";
        self.check_rank(op, "destination", dest)?;
        if dest == self.rank {
            return Err(DistError::invalid(
                op,
                "a rank cannot send to itself; use the array directly",
            ));
        }
        Self::check_tag(op, tag)?;
        self.begin_p2p()?;
        let staged = (|| -> Result<Vec<u8>> {
            self.check_array(op, x)?;
            byte_count(op, x)?;
            Ok(x.host_bytes()?)
        })();
        let mut header = Meta::new(Call::Send, 0);
        header.dtype = Some(x.dtype());
        header.shape = Some(x.shape().to_vec());
        header.kind = x.device().kind().as_str().to_owned();
        header.error = staged.as_ref().err().map(ToString::to_string);
        let (hl, h) = lease(header.encode().to_vec());
        let h: &'static [u8] = h;
        let request = self
            .ctrl
            .process_at_rank(dest as i32)
            .immediate_send_with_tag(StaticScope, h, tag);
        let done = self.wait(request, Call::Send, 0, "sending a message header")?;
        hl.reclaim(&done);
        let bytes = staged?;
        let (dl, d) = lease(bytes);
        let d: &'static [u8] = d;
        let request = self
            .comm
            .process_at_rank(dest as i32)
            .immediate_send_with_tag(StaticScope, d, tag);
        let done = self.wait(request, Call::Send, 0, "sending data")?;
        dl.reclaim(&done);
        Ok(())
    }

    /// Receives the array rank `source` sent with `tag`, with its shape and
    /// dtype, on this rank's device ([`Communicator::device`]).
    pub fn recv(&self, source: usize, tag: i32) -> Result<Array> {
        let op = "recv";
        self.check_rank(op, "source", source)?;
        if source == self.rank {
            return Err(DistError::invalid(op, "a rank cannot receive from itself"));
        }
        Self::check_tag(op, tag)?;
        self.begin_p2p()?;
        let (hl, h) = lease(vec![0u8; RECORD]);
        let request = self
            .ctrl
            .process_at_rank(source as i32)
            .immediate_receive_into_with_tag(StaticScope, h, tag);
        let done = self.wait(request, Call::Recv, 0, "waiting for a message header")?;
        let header = hl.reclaim(&done);
        let peer = |message: String| DistError::PeerFailed {
            op: op.into(),
            seq: 0,
            rank: source,
            message,
        };
        let meta = Meta::decode(&header).ok_or_else(|| peer("it sent a header this rank cannot read".into()))?;
        if let Some(message) = meta.error {
            return Err(peer(message));
        }
        let (Some(dtype), Some(shape)) = (meta.dtype, meta.shape) else {
            return Err(peer("its header has no dtype or shape".into()));
        };
        let size = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let bytes = size
            .and_then(|n| n.checked_mul(dtype.size()))
            .ok_or_else(|| peer(format!("its shape {shape:?} is too large")))?;
        let (dl, d) = lease(vec![0u8; bytes]);
        let request = self
            .comm
            .process_at_rank(source as i32)
            .immediate_receive_into_with_tag(StaticScope, d, tag);
        let done = self.wait(request, Call::Recv, 0, "receiving data")?;
        let data = dl.reclaim(&done);
        array_from_bytes(dtype, &shape, &data, self.device)
    }

    fn begin_p2p(&self) -> Result<()> {
        match self.shared.broken.borrow().as_ref() {
            Some(why) => Err(DistError::Broken(why.clone())),
            None => Ok(()),
        }
    }
}

/// What a device engine reduces for `op`: the staged array itself, but
/// for a `Mean` of `f16` or `bf16` its `f32` form, so that the sum does not
/// overflow before the division (three ranks of 65504 in `f16`) and the
/// mean is rounded once, as through MPI.
fn reduced_form(xd: Array, op: ReduceOp) -> Result<Array> {
    Ok(match xd.dtype() {
        DType::F16 | DType::BF16 if op == ReduceOp::Mean => xd.astype(DType::F32)?,
        _ => xd,
    })
}

/// Checks that `op` is defined for `dtype`.
fn check_reduce(name: &str, dtype: DType, op: ReduceOp) -> Result<()> {
    if dtype.is_complex() {
        return Err(DistError::Unsupported {
            op: format!("{name}({})", op.name()),
            dtype,
            reason: "no engine reduces complex numbers; reduce real() and imag() separately".into(),
        });
    }
    if op == ReduceOp::Mean && !dtype.is_float() {
        return Err(DistError::Unsupported {
            op: format!("{name}(mean)"),
            dtype,
            reason: "mean is defined for float dtypes; cast with astype first".into(),
        });
    }
    Ok(())
}

/// The array's size in bytes, checked to fit one MPI message.
fn byte_count(op: &str, x: &Array) -> Result<usize> {
    let bytes = x.size() * x.dtype().size();
    if bytes > i32::MAX as usize {
        return Err(DistError::invalid(
            op,
            format!("{bytes} bytes do not fit one MPI message (at most {} bytes)", i32::MAX),
        ));
    }
    Ok(bytes)
}

fn byte_count_total(op: &str, each: usize, ranks: usize) -> Result<usize> {
    match each.checked_mul(ranks) {
        Some(total) if total <= i32::MAX as usize => Ok(total),
        _ => Err(DistError::invalid(
            op,
            format!(
                "{ranks} x {each} bytes do not fit one MPI message (at most {} bytes)",
                i32::MAX
            ),
        )),
    }
}

/// Builds an array from little-endian host bytes.
fn array_from_bytes(dtype: DType, shape: &[usize], bytes: &[u8], device: Device) -> Result<Array> {
    fn typed<T: Element>(bytes: &[u8], shape: &[usize], device: Device) -> anydev::Result<Array> {
        let values: Vec<T> = bytes.chunks_exact(T::DTYPE.size()).map(T::get_le).collect();
        Array::from_vec(values, shape, device)
    }
    Ok(match dtype {
        DType::Bool => typed::<bool>(bytes, shape, device),
        DType::I8 => typed::<i8>(bytes, shape, device),
        DType::I16 => typed::<i16>(bytes, shape, device),
        DType::I32 => typed::<i32>(bytes, shape, device),
        DType::I64 => typed::<i64>(bytes, shape, device),
        DType::U8 => typed::<u8>(bytes, shape, device),
        DType::U16 => typed::<u16>(bytes, shape, device),
        DType::U32 => typed::<u32>(bytes, shape, device),
        DType::U64 => typed::<u64>(bytes, shape, device),
        DType::F16 => typed::<half::f16>(bytes, shape, device),
        DType::BF16 => typed::<half::bf16>(bytes, shape, device),
        DType::F32 => typed::<f32>(bytes, shape, device),
        DType::F64 => typed::<f64>(bytes, shape, device),
        DType::C64 => typed::<anydev::Complex32>(bytes, shape, device),
        DType::C128 => typed::<anydev::Complex64>(bytes, shape, device),
    }?)
}

/// An array's values on the host, typed for an MPI reduction.
enum HostVec {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! each_host_vec {
    ($value:expr, $v:ident => $body:expr) => {
        match $value {
            HostVec::Bool($v) => HostVec::Bool($body),
            HostVec::I8($v) => HostVec::I8($body),
            HostVec::I16($v) => HostVec::I16($body),
            HostVec::I32($v) => HostVec::I32($body),
            HostVec::I64($v) => HostVec::I64($body),
            HostVec::U8($v) => HostVec::U8($body),
            HostVec::U16($v) => HostVec::U16($body),
            HostVec::U32($v) => HostVec::U32($body),
            HostVec::U64($v) => HostVec::U64($body),
            HostVec::F32($v) => HostVec::F32($body),
            HostVec::F64($v) => HostVec::F64($body),
        }
    };
}

impl HostVec {
    /// `x` copied to the host in its wire dtype (f16/bf16 cast to f32 on
    /// the device first).
    fn stage(op: &str, x: &Array) -> Result<HostVec> {
        let wire = wire_dtype(x.dtype());
        let x = if wire != x.dtype() { x.astype(wire)? } else { x.clone() };
        let count = x.size();
        if count > i32::MAX as usize {
            return Err(DistError::invalid(
                op,
                format!("{count} elements do not fit one MPI message (at most {})", i32::MAX),
            ));
        }
        Ok(match wire {
            DType::Bool => HostVec::Bool(x.to_vec()?),
            DType::I8 => HostVec::I8(x.to_vec()?),
            DType::I16 => HostVec::I16(x.to_vec()?),
            DType::I32 => HostVec::I32(x.to_vec()?),
            DType::I64 => HostVec::I64(x.to_vec()?),
            DType::U8 => HostVec::U8(x.to_vec()?),
            DType::U16 => HostVec::U16(x.to_vec()?),
            DType::U32 => HostVec::U32(x.to_vec()?),
            DType::U64 => HostVec::U64(x.to_vec()?),
            DType::F32 => HostVec::F32(x.to_vec()?),
            DType::F64 => HostVec::F64(x.to_vec()?),
            DType::F16 | DType::BF16 => unreachable!("wire_dtype maps f16 and bf16 to f32"),
            DType::C64 | DType::C128 => unreachable!("check_reduce refuses complex dtypes"),
        })
    }

    fn dtype(&self) -> DType {
        match self {
            HostVec::Bool(_) => DType::Bool,
            HostVec::I8(_) => DType::I8,
            HostVec::I16(_) => DType::I16,
            HostVec::I32(_) => DType::I32,
            HostVec::I64(_) => DType::I64,
            HostVec::U8(_) => DType::U8,
            HostVec::U16(_) => DType::U16,
            HostVec::U32(_) => DType::U32,
            HostVec::U64(_) => DType::U64,
            HostVec::F32(_) => DType::F32,
            HostVec::F64(_) => DType::F64,
        }
    }

    /// All-reduce (`blocks: None`) or reduce-scatter into `blocks` blocks.
    ///
    /// MPI leaves NaN in `MPI_MIN`/`MPI_MAX` to the implementation (Open
    /// MPI keeps one from the first rank and drops one from the last), so a
    /// float min or max also reduces a mask of NaNs and puts NaN wherever
    /// any rank had one, as the device engines and `anydev::min` do.
    fn reduce(self, comm: &Communicator, call: Call, seq: u64, op: ReduceOp, blocks: Option<usize>) -> Result<HostVec> {
        let mpi_op = op.mpi_op(self.dtype());
        let nans = matches!(op, ReduceOp::Min | ReduceOp::Max)
            .then(|| self.nan_mask())
            .flatten();
        let mut reduced = each_host_vec!(self, v => reduce_typed(comm, call, seq, v, mpi_op, blocks)?);
        if let Some(mask) = nans {
            let any = reduce_typed(comm, call, seq, mask, SystemOperation::max(), blocks)?;
            reduced.set_nan_where(&any);
        }
        Ok(reduced)
    }

    /// 1 where an element is NaN, for float vectors.
    fn nan_mask(&self) -> Option<Vec<u8>> {
        match self {
            HostVec::F32(v) => Some(v.iter().map(|x| u8::from(x.is_nan())).collect()),
            HostVec::F64(v) => Some(v.iter().map(|x| u8::from(x.is_nan())).collect()),
            _ => None,
        }
    }

    fn set_nan_where(&mut self, mask: &[u8]) {
        match self {
            HostVec::F32(v) => v
                .iter_mut()
                .zip(mask)
                .filter(|(_, &m)| m != 0)
                .for_each(|(x, _)| *x = f32::NAN),
            HostVec::F64(v) => v
                .iter_mut()
                .zip(mask)
                .filter(|(_, &m)| m != 0)
                .for_each(|(x, _)| *x = f64::NAN),
            _ => {}
        }
    }

    fn into_array(self, shape: &[usize], device: Device) -> Result<Array> {
        Ok(match self {
            HostVec::Bool(v) => Array::from_vec(v, shape, device),
            HostVec::I8(v) => Array::from_vec(v, shape, device),
            HostVec::I16(v) => Array::from_vec(v, shape, device),
            HostVec::I32(v) => Array::from_vec(v, shape, device),
            HostVec::I64(v) => Array::from_vec(v, shape, device),
            HostVec::U8(v) => Array::from_vec(v, shape, device),
            HostVec::U16(v) => Array::from_vec(v, shape, device),
            HostVec::U32(v) => Array::from_vec(v, shape, device),
            HostVec::U64(v) => Array::from_vec(v, shape, device),
            HostVec::F32(v) => Array::from_vec(v, shape, device),
            HostVec::F64(v) => Array::from_vec(v, shape, device),
        }?)
    }
}

fn reduce_typed<T: Element + Equivalence>(
    comm: &Communicator,
    call: Call,
    seq: u64,
    values: Vec<T>,
    op: SystemOperation,
    blocks: Option<usize>,
) -> Result<Vec<T>> {
    let n = values.len();
    let recv_len = blocks.map_or(n, |b| n / b);
    // Any values do as the receive buffer's start: MPI overwrites them.
    let initial = values[..recv_len].to_vec();
    let (sl, send) = lease(values);
    let (rl, recv) = lease(initial);
    let send: &'static [T] = send;
    let request = match blocks {
        None => comm.comm.immediate_all_reduce_into(StaticScope, send, recv, op),
        Some(_) => comm
            .comm
            .immediate_reduce_scatter_block_into(StaticScope, send, recv, op),
    };
    let done = comm.wait(request, call, seq, "reducing")?;
    sl.reclaim(&done);
    Ok(rl.reclaim(&done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout("2.5").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_timeout(" 30 ").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_timeout("1e-9").unwrap(), Duration::from_nanos(1));
        for bad in ["0", "-1", "soon", "inf", "NaN", "1e-12"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reduce_ops_on_dtypes() {
        assert!(check_reduce("all_reduce", DType::I32, ReduceOp::Mean).is_err());
        assert!(check_reduce("all_reduce", DType::Bool, ReduceOp::Mean).is_err());
        assert!(check_reduce("all_reduce", DType::F16, ReduceOp::Mean).is_ok());
        assert!(check_reduce("all_reduce", DType::C64, ReduceOp::Sum).is_err());
        assert_eq!(wire_dtype(DType::BF16), DType::F32);
        assert_eq!(wire_dtype(DType::U16), DType::U16);
        assert_eq!(ReduceOp::code_name(ReduceOp::Max as u8), "max");
        assert_eq!(ReduceOp::code_name(0), "none");
        for op in ReduceOp::ALL {
            assert_eq!(ReduceOp::from_name(op.name()).unwrap(), op);
        }
        let err = ReduceOp::from_name("average").unwrap_err().to_string();
        assert!(err.contains("\"average\"") && err.contains("mean"), "{err}");
    }

    #[test]
    fn bytes_round_trip_through_arrays_of_every_dtype() {
        for dtype in DType::ALL {
            let values = [0.0f64, 1.0, 0.0, 2.0, 3.0, 0.0];
            let x = Array::from_slice(&values, &[2, 3], (dtype, Device::cpu())).unwrap();
            let y = array_from_bytes(dtype, &[2, 3], &x.host_bytes().unwrap(), Device::cpu()).unwrap();
            assert_eq!(y.dtype(), dtype);
            assert_eq!(y.shape(), &[2, 3]);
            assert_eq!(y.host_bytes().unwrap(), x.host_bytes().unwrap(), "{dtype}");
        }
    }
}
