//! The simulator's collectives (ABI 1.6) through its exported C table, as a
//! host drives them, with threads of this process as the ranks: one
//! context of four devices, one communicator id, and one thread per rank
//! joining on the device of its rank. Results are compared with a host
//! computation written here, in f64 on small integers (exact in every
//! dtype), in rank order.

use anydev_ops::{DType, DTypeKind};
use anydev_plugin::abi::*;
use anydev_sim::{Sim, CHUNK_BYTES};
use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::sync::Arc;
use std::time::{Duration, Instant};

static API: AnydevPluginApi = anydev_plugin::api_table::<Sim>();

/// An error a call returned: its code and message.
#[derive(Debug)]
struct Failure {
    code: i32,
    message: String,
}

/// Raw handles moved between the test's threads.
struct Handle<T>(*mut T);

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}
// SAFETY: the ABI allows every call from any thread; the handles are only
// passed back to the plugin.
unsafe impl<T> Send for Handle<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Handle<T> {}

/// One plugin context with four sim devices.
struct Api {
    ctx: Handle<AnydevContext>,
}

macro_rules! call {
    ($name:ident($($arg:expr),*)) => {
        // SAFETY: every handle passed is a live handle of this context and
        // every pointer points at memory valid for the call.
        unsafe { (API.$name.expect(stringify!($name)))($($arg),*) }
    };
}

fn status(status: AnydevStatus) -> Result<(), Failure> {
    if status.is_null() {
        return Ok(());
    }
    let code = call!(error_code(status));
    let message = call!(error_message(status));
    // SAFETY: the message is a NUL-terminated string owned by the error,
    // copied before the error is destroyed.
    let message = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    call!(error_destroy(status));
    Err(Failure { code, message })
}

/// One collective as the header's struct describes it.
struct Collective {
    kind: u32,
    dtype: DType,
    op: u32,
    peer: u32,
    send: Option<(*mut AnydevBuffer, u64)>,
    recv: Option<(*mut AnydevBuffer, u64)>,
    count: u64,
}

impl<T> Handle<T> {
    /// The pointer (a method, so that a closure captures the whole handle).
    fn get(self) -> *mut T {
        self.0
    }
}

impl Api {
    fn new() -> Arc<Api> {
        let name = CString::new("sim").unwrap();
        let options = CString::new(r#"{"devices": 4}"#).unwrap();
        let mut args = AnydevInitArgs::new_sized();
        args.host_version = ABI_VERSION;
        args.plugin_name = name.as_ptr();
        args.options_json = options.as_ptr();
        let mut ctx = null_mut();
        status(call!(initialize(&args, &mut ctx))).unwrap();
        Arc::new(Api { ctx: Handle(ctx) })
    }

    fn ctx(&self) -> *mut AnydevContext {
        self.ctx.0
    }

    fn device(&self, index: usize) -> *mut AnydevDevice {
        let mut device = null_mut();
        status(call!(get_device(self.ctx(), index as u32, &mut device))).unwrap();
        device
    }

    fn comm_id(&self) -> AnydevCommId {
        let mut id = AnydevCommId::default();
        status(call!(comm_id(self.ctx(), &mut id))).unwrap();
        id
    }

    fn comm_init(
        &self,
        device: usize,
        id: &AnydevCommId,
        nranks: u32,
        rank: u32,
        timeout_ms: u64,
    ) -> Result<*mut AnydevComm, Failure> {
        let mut args = AnydevCommInitArgs::new_sized();
        args.id = *id;
        args.nranks = nranks;
        args.rank = rank;
        args.timeout_ms = timeout_ms;
        let mut comm = null_mut();
        status(call!(comm_init(self.ctx(), self.device(device), &args, &mut comm)))?;
        Ok(comm)
    }

    fn abort(&self, comm: *mut AnydevComm) {
        status(call!(comm_abort(self.ctx(), comm))).unwrap();
    }

    fn destroy(&self, comm: *mut AnydevComm) {
        status(call!(comm_destroy(self.ctx(), comm))).unwrap();
    }

    fn stream(&self, device: usize) -> *mut AnydevStream {
        let mut stream = null_mut();
        status(call!(stream_create(self.ctx(), self.device(device), &mut stream))).unwrap();
        stream
    }

    fn synchronize(&self, stream: *mut AnydevStream) -> Result<(), Failure> {
        status(call!(stream_synchronize(self.ctx(), stream)))
    }

    fn destroy_stream(&self, stream: *mut AnydevStream) {
        status(call!(stream_destroy(self.ctx(), stream))).unwrap();
    }

    /// A buffer on `device` holding `bytes`.
    fn upload(&self, device: usize, stream: *mut AnydevStream, bytes: &[u8]) -> *mut AnydevBuffer {
        let mut buffer = null_mut();
        let size = bytes.len() as u64;
        status(call!(allocate(
            self.ctx(),
            self.device(device),
            size,
            ANYDEV_MEMORY_DEVICE,
            &mut buffer
        )))
        .unwrap();
        status(call!(copy_host_to_device(
            self.ctx(),
            stream,
            bytes.as_ptr(),
            buffer,
            0,
            size
        )))
        .unwrap();
        buffer
    }

    fn download(&self, stream: *mut AnydevStream, buffer: *mut AnydevBuffer, len: usize) -> Result<Vec<u8>, Failure> {
        let mut bytes = vec![0u8; len];
        status(call!(copy_device_to_host(
            self.ctx(),
            stream,
            buffer,
            0,
            bytes.as_mut_ptr(),
            len as u64
        )))?;
        Ok(bytes)
    }

    fn free(&self, buffer: *mut AnydevBuffer) {
        status(call!(free(self.ctx(), buffer))).unwrap();
    }

    fn collective(&self, comm: *mut AnydevComm, stream: *mut AnydevStream, c: &Collective) -> Result<(), Failure> {
        let mut call = AnydevCollectiveCall::new_sized();
        call.kind = c.kind;
        call.dtype = c.dtype.code();
        call.reduce_op = c.op;
        call.peer = c.peer;
        (call.send, call.send_offset) = c.send.unwrap_or((null_mut(), 0));
        (call.recv, call.recv_offset) = c.recv.unwrap_or((null_mut(), 0));
        call.count = c.count;
        status(call!(collective(self.ctx(), comm, stream, &call)))
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        status(call!(shutdown(self.ctx()))).unwrap();
    }
}

/// One rank of a running communicator, on its own thread.
struct Rank<'a> {
    api: &'a Api,
    rank: usize,
    n: usize,
    comm: *mut AnydevComm,
    stream: *mut AnydevStream,
}

/// Where a collective's send data starts in its buffer, and recv's: not
/// at 0, so that offsets are honoured.
const SEND_AT: usize = 24;
const RECV_AT: usize = 40;
/// What recv buffers hold before a collective writes them.
const SENTINEL: u8 = 0xa5;

impl Rank<'_> {
    /// Runs one collective with `send` as this rank's send data (at
    /// `SEND_AT` in its buffer) and `recv_len` bytes of recv (at `RECV_AT`,
    /// after sentinel bytes); returns the recv bytes once the stream is done.
    // The arguments are the ABI struct's fields.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        kind: u32,
        dtype: DType,
        op: u32,
        peer: usize,
        send: Option<&[u8]>,
        recv_len: Option<usize>,
        count: usize,
    ) -> Result<Option<Vec<u8>>, Failure> {
        let api = self.api;
        let with_prefix = |at: usize, bytes: &[u8]| [vec![SENTINEL; at], bytes.to_vec()].concat();
        let send = send.map(|bytes| api.upload(self.rank, self.stream, &with_prefix(SEND_AT, bytes)));
        let recv = recv_len.map(|len| api.upload(self.rank, self.stream, &vec![SENTINEL; RECV_AT + len]));
        let c = Collective {
            kind,
            dtype,
            op,
            peer: peer as u32,
            send: send.map(|b| (b, SEND_AT as u64)),
            recv: recv.map(|b| (b, RECV_AT as u64)),
            count: count as u64,
        };
        let outcome = api.collective(self.comm, self.stream, &c).and_then(|()| {
            api.synchronize(self.stream)?;
            let Some((buffer, len)) = recv.zip(recv_len) else {
                return Ok(None);
            };
            let bytes = api.download(self.stream, buffer, RECV_AT + len)?;
            assert!(
                bytes[..RECV_AT].iter().all(|&b| b == SENTINEL),
                "bytes before recv_offset were written"
            );
            Ok(Some(bytes[RECV_AT..].to_vec()))
        });
        send.into_iter().chain(recv).for_each(|b| api.free(b));
        outcome
    }
}

/// Runs `body` on `n` ranks of a new communicator, one thread each on
/// devices 0..n. A rank whose body panics aborts the communicator first, so
/// that the others fail instead of waiting for it forever.
fn world(api: &Api, n: usize, body: impl Fn(&Rank) + Sync) {
    let id = api.comm_id();
    std::thread::scope(|scope| {
        for rank in 0..n {
            let body = &body;
            scope.spawn(move || {
                let comm = api.comm_init(rank, &id, n as u32, rank as u32, 60_000).unwrap();
                let stream = api.stream(rank);
                let me = Rank {
                    api,
                    rank,
                    n,
                    comm,
                    stream,
                };
                let outcome = catch_unwind(AssertUnwindSafe(|| body(&me)));
                if outcome.is_err() {
                    api.abort(comm);
                }
                let _ = api.synchronize(stream);
                api.destroy_stream(stream);
                api.destroy(comm);
                if let Err(panic) = outcome {
                    resume_unwind(panic);
                }
            });
        }
    });
}

/// Element `i` of rank `rank`'s data for a collective numbered `salt`:
/// small integers (0/1 for bool, 0..=3 unsigned, -3..=3 signed and real,
/// -2..=2 per complex part), so that every sum and product of up to four
/// ranks is exact in every dtype.
fn value(dtype: DType, rank: usize, i: usize, salt: usize) -> (f64, f64) {
    let h = |k: usize| rank * 5 + i * 3 + i / 3 + salt * 7 + k * 11;
    match dtype.kind() {
        DTypeKind::Bool => (f64::from(h(0) % 3 == 0), 0.0),
        DTypeKind::UnsignedInt => ((h(0) % 4) as f64, 0.0),
        DTypeKind::Complex => ((h(0) % 5) as f64 - 2.0, (h(1) % 5) as f64 - 2.0),
        DTypeKind::SignedInt | DTypeKind::Float => ((h(0) % 7) as f64 - 3.0, 0.0),
    }
}

fn data(dtype: DType, rank: usize, len: usize, salt: usize) -> Vec<(f64, f64)> {
    (0..len).map(|i| value(dtype, rank, i, salt)).collect()
}

/// Little-endian bytes of `values` as `dtype` (exact for the values used).
fn encode(dtype: DType, values: &[(f64, f64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * dtype.size());
    for &(re, im) in values {
        match dtype {
            DType::Bool => out.push(u8::from(re != 0.0)),
            DType::I8 => out.extend((re as i8).to_le_bytes()),
            DType::I16 => out.extend((re as i16).to_le_bytes()),
            DType::I32 => out.extend((re as i32).to_le_bytes()),
            DType::I64 => out.extend((re as i64).to_le_bytes()),
            DType::U8 => out.extend((re as u8).to_le_bytes()),
            DType::U16 => out.extend((re as u16).to_le_bytes()),
            DType::U32 => out.extend((re as u32).to_le_bytes()),
            DType::U64 => out.extend((re as u64).to_le_bytes()),
            DType::F16 => out.extend(half::f16::from_f64(re).to_le_bytes()),
            DType::BF16 => out.extend(half::bf16::from_f64(re).to_le_bytes()),
            DType::F32 => out.extend((re as f32).to_le_bytes()),
            DType::F64 => out.extend(re.to_le_bytes()),
            DType::C64 => {
                out.extend((re as f32).to_le_bytes());
                out.extend((im as f32).to_le_bytes());
            }
            DType::C128 => {
                out.extend(re.to_le_bytes());
                out.extend(im.to_le_bytes());
            }
        }
    }
    out
}

/// The ranks' values combined in rank order. For bool, whose encoding is
/// "not zero", a sum is an or and a product an and, as are max and min.
fn combine(op: u32, values: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64) {
    let f = |a: (f64, f64), b: (f64, f64)| match op {
        ANYDEV_REDUCE_SUM => (a.0 + b.0, a.1 + b.1),
        ANYDEV_REDUCE_PROD => (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0),
        ANYDEV_REDUCE_MIN => (a.0.min(b.0), 0.0),
        ANYDEV_REDUCE_MAX => (a.0.max(b.0), 0.0),
        _ => unreachable!(),
    };
    values.into_iter().reduce(f).unwrap()
}

/// Fails with the first differing element, not megabytes of bytes.
fn assert_bytes(got: &[u8], want: &[u8], dtype: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if got == want {
        return;
    }
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let e = i / dtype.size();
        let at = e * dtype.size()..(e + 1) * dtype.size();
        panic!(
            "{what}: element {e} is {:?}, expected {:?}",
            &got[at.clone()],
            &want[at]
        );
    }
}

const DTYPES: [DType; 15] = DType::ALL;

/// Every collective, on every dtype, for several counts, on `n` ranks;
/// each rank checks its own results.
fn every_collective_on(n: usize) {
    let api = Api::new();
    world(&api, n, |me| {
        let (r, n) = (me.rank, me.n);
        let mut salt = 0;
        for dtype in DTYPES {
            // More than one chunk for a 4- and a 16-byte dtype (every
            // dtype's chunks go the same way; the element size changes
            // where the chunks end).
            let big = [CHUNK_BYTES / dtype.size() + 1000];
            let counts = [
                &[0, 1, 7, 1000][..],
                if matches!(dtype, DType::F32 | DType::C128) {
                    &big
                } else {
                    &[]
                },
            ];
            let ops: &[u32] = match dtype.is_complex() {
                true => &[ANYDEV_REDUCE_SUM, ANYDEV_REDUCE_PROD],
                false => &[
                    ANYDEV_REDUCE_SUM,
                    ANYDEV_REDUCE_PROD,
                    ANYDEV_REDUCE_MIN,
                    ANYDEV_REDUCE_MAX,
                ],
            };
            for &count in counts.concat().iter() {
                let bytes = count * dtype.size();
                let what = |kind: &str| format!("{kind} of {count} {dtype} on rank {r} of {n}");
                for &op in ops {
                    salt += 1;
                    let mine = encode(dtype, &data(dtype, r, count, salt));
                    let got = me
                        .run(
                            ANYDEV_COLLECTIVE_ALL_REDUCE,
                            dtype,
                            op,
                            0,
                            Some(&mine),
                            Some(bytes),
                            count,
                        )
                        .unwrap()
                        .unwrap();
                    let want: Vec<_> = (0..count)
                        .map(|i| combine(op, (0..n).map(|p| value(dtype, p, i, salt))))
                        .collect();
                    assert_bytes(&got, &encode(dtype, &want), dtype, &what(&format!("all_reduce({op})")));

                    salt += 1;
                    let mine = encode(dtype, &data(dtype, r, n * count, salt));
                    let got = me
                        .run(
                            ANYDEV_COLLECTIVE_REDUCE_SCATTER,
                            dtype,
                            op,
                            0,
                            Some(&mine),
                            Some(bytes),
                            count,
                        )
                        .unwrap()
                        .unwrap();
                    let want: Vec<_> = (0..count)
                        .map(|i| combine(op, (0..n).map(|p| value(dtype, p, r * count + i, salt))))
                        .collect();
                    assert_bytes(
                        &got,
                        &encode(dtype, &want),
                        dtype,
                        &what(&format!("reduce_scatter({op})")),
                    );
                }

                salt += 1;
                let root = salt % n;
                let mine = (r == root).then(|| encode(dtype, &data(dtype, r, count, salt)));
                let got = me
                    .run(
                        ANYDEV_COLLECTIVE_BROADCAST,
                        dtype,
                        0,
                        root,
                        mine.as_deref(),
                        Some(bytes),
                        count,
                    )
                    .unwrap()
                    .unwrap();
                let want = encode(dtype, &data(dtype, root, count, salt));
                assert_bytes(&got, &want, dtype, &what(&format!("broadcast from {root}")));

                salt += 1;
                let mine = encode(dtype, &data(dtype, r, count, salt));
                let got = me
                    .run(
                        ANYDEV_COLLECTIVE_ALL_GATHER,
                        dtype,
                        0,
                        0,
                        Some(&mine),
                        Some(n * bytes),
                        count,
                    )
                    .unwrap()
                    .unwrap();
                let want: Vec<_> = (0..n).flat_map(|p| data(dtype, p, count, salt)).collect();
                assert_bytes(&got, &encode(dtype, &want), dtype, &what("all_gather"));

                salt += 1;
                let mine = encode(dtype, &data(dtype, r, n * count, salt));
                let got = me
                    .run(
                        ANYDEV_COLLECTIVE_ALL_TO_ALL,
                        dtype,
                        0,
                        0,
                        Some(&mine),
                        Some(n * bytes),
                        count,
                    )
                    .unwrap()
                    .unwrap();
                let want: Vec<_> = (0..n)
                    .flat_map(|p| data(dtype, p, n * count, salt)[r * count..(r + 1) * count].to_vec())
                    .collect();
                assert_bytes(&got, &encode(dtype, &want), dtype, &what("all_to_all"));
            }
        }
    });
}

#[test]
fn every_collective_matches_the_host_on_two_ranks() {
    every_collective_on(2);
}

#[test]
fn every_collective_matches_the_host_on_three_ranks() {
    every_collective_on(3);
}

#[test]
fn every_collective_matches_the_host_on_four_ranks() {
    every_collective_on(4);
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn reductions_follow_the_abi_rules_in_rank_order() {
    let api = Api::new();
    world(&api, 3, |me| {
        let r = me.rank;
        let all_reduce = |dtype: DType, op: u32, mine: &[u8]| {
            let count = mine.len() / dtype.size();
            me.run(
                ANYDEV_COLLECTIVE_ALL_REDUCE,
                dtype,
                op,
                0,
                Some(mine),
                Some(mine.len()),
                count,
            )
            .unwrap()
            .unwrap()
        };
        // Rank order: (1e8 + 1) - 1e8 is 0 in f32; any other order gives 1.
        let got = all_reduce(DType::F32, ANYDEV_REDUCE_SUM, &f32_bytes(&[[1e8, 1.0, -1e8][r]]));
        assert_eq!(f32s(&got), [0.0]);
        // Integers wrap.
        let got = all_reduce(DType::I32, ANYDEV_REDUCE_SUM, &[i32::MAX, 1, 0][r].to_le_bytes());
        assert_eq!(got, i32::MIN.to_le_bytes());
        let got = all_reduce(DType::U8, ANYDEV_REDUCE_SUM, &[[200u8], [100], [1]][r]);
        assert_eq!(got, [45]);
        // f16 and bf16 accumulate in f32 and round once: 2048 + 1 + 1 stays
        // 2048 when each step rounds to f16.
        let h = |v: f32| half::f16::from_f32(v).to_le_bytes();
        assert_eq!(
            all_reduce(DType::F16, ANYDEV_REDUCE_SUM, &h([2048.0, 1.0, 1.0][r])),
            h(2050.0)
        );
        let b = |v: f32| half::bf16::from_f32(v).to_le_bytes();
        assert_eq!(
            all_reduce(DType::BF16, ANYDEV_REDUCE_SUM, &b([256.0, 1.0, 1.0][r])),
            b(258.0)
        );
        // Min and max propagate NaN from any rank.
        let mine = f32_bytes(&[[f32::NAN, 1.0, 2.0], [1.0, f32::NAN, 3.0], [0.0, 5.0, -1.0]][r]);
        let got = f32s(&all_reduce(DType::F32, ANYDEV_REDUCE_MIN, &mine));
        assert!(got[0].is_nan() && got[1].is_nan() && got[2] == -1.0, "{got:?}");
        let got = f32s(&all_reduce(DType::F32, ANYDEV_REDUCE_MAX, &mine));
        assert!(got[0].is_nan() && got[1].is_nan() && got[2] == 3.0, "{got:?}");
    });
}

#[test]
fn sends_and_recvs_pair_up_in_order_per_pair_of_ranks() {
    let api = Api::new();
    let first: Vec<f32> = (0..5).map(|i| i as f32 + 0.5).collect();
    // More than one chunk.
    let second: Vec<f32> = (0..300_000).map(|i| (i % 1013) as f32 - 7.0).collect();
    world(&api, 3, |me| {
        let f32_send = |peer: usize, values: &[f32]| {
            me.run(
                ANYDEV_COLLECTIVE_SEND,
                DType::F32,
                0,
                peer,
                Some(&f32_bytes(values)),
                None,
                values.len(),
            )
            .unwrap()
        };
        let f32_recv = |peer: usize, count: usize| {
            f32s(
                &me.run(
                    ANYDEV_COLLECTIVE_RECV,
                    DType::F32,
                    0,
                    peer,
                    None,
                    Some(count * 4),
                    count,
                )
                .unwrap()
                .unwrap(),
            )
        };
        match me.rank {
            0 => {
                assert_eq!(f32_send(2, &first), None);
                assert_eq!(f32_send(2, &second), None);
                assert_eq!(f32_recv(2, 3), [9.0, 8.0, 7.0]);
            }
            // Rank 1 takes no part: the others' messages do not need it.
            1 => {}
            _ => {
                assert_eq!(f32_recv(0, first.len()), first);
                assert_eq!(f32_recv(0, second.len()), second);
                f32_send(0, &[9.0, 8.0, 7.0]);
            }
        }
    });
}

#[test]
fn ranks_whose_calls_differ_get_an_error_not_each_others_bytes() {
    let api = Api::new();
    world(&api, 2, |me| {
        let mine = f32_bytes(&[1.0; 8]);
        let outcome = match me.rank {
            0 => me.run(
                ANYDEV_COLLECTIVE_ALL_REDUCE,
                DType::F32,
                ANYDEV_REDUCE_SUM,
                0,
                Some(&mine),
                Some(32),
                8,
            ),
            _ => me.run(
                ANYDEV_COLLECTIVE_ALL_GATHER,
                DType::F32,
                0,
                0,
                Some(&mine[..16]),
                Some(32),
                4,
            ),
        };
        let err = outcome.unwrap_err();
        assert!(err.message.contains("collective calls differ"), "{}", err.message);
        assert!(
            err.message.contains("all_reduce(Sum) of f32") && err.message.contains("all_gather of f32"),
            "{}",
            err.message
        );
    });
}

/// Joins ranks 0..n of a new communicator from as many threads; returns
/// their handles.
fn join_all(api: &Api, n: usize) -> Vec<Handle<AnydevComm>> {
    let id = api.comm_id();
    std::thread::scope(|scope| {
        let ranks: Vec<_> = (0..n)
            .map(|r| scope.spawn(move || Handle(api.comm_init(r, &id, n as u32, r as u32, 60_000).unwrap())))
            .collect();
        ranks.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn malformed_calls_are_refused_when_enqueued() {
    let api = Api::new();
    let comms = join_all(&api, 2);
    let comm = comms[0].get();
    let stream = api.stream(0);
    let other_stream = api.stream(1);
    let buffer = api.upload(0, stream, &[0; 64]);
    let on_device_1 = api.upload(1, other_stream, &[0; 64]);
    let call = |kind, dtype, op, peer, send, recv, count| Collective {
        kind,
        dtype,
        op,
        peer,
        send,
        recv,
        count,
    };
    let (send, recv) = (Some((buffer, 0)), Some((buffer, 32)));
    let refused = [
        (
            call(ANYDEV_COLLECTIVE_SEND, DType::F32, 0, 2, send, None, 4),
            "peer 2 is not another rank",
        ),
        (
            call(ANYDEV_COLLECTIVE_SEND, DType::F32, 0, 0, send, None, 4),
            "peer 0 is not another rank",
        ),
        (
            call(ANYDEV_COLLECTIVE_BROADCAST, DType::F32, 0, 3, send, recv, 4),
            "root 3 is not a rank",
        ),
        (
            call(
                ANYDEV_COLLECTIVE_ALL_REDUCE,
                DType::F32,
                ANYDEV_REDUCE_SUM,
                0,
                None,
                recv,
                4,
            ),
            "needs a send buffer",
        ),
        (
            call(ANYDEV_COLLECTIVE_RECV, DType::F32, 0, 1, send, recv, 4),
            "takes no send buffer",
        ),
        (
            call(ANYDEV_COLLECTIVE_SEND, DType::F32, 0, 1, send, recv, 4),
            "takes no recv buffer",
        ),
        (
            call(ANYDEV_COLLECTIVE_BROADCAST, DType::F32, 0, 1, send, recv, 4),
            "read on the root (1) only",
        ),
        (
            call(
                ANYDEV_COLLECTIVE_ALL_REDUCE,
                DType::C64,
                ANYDEV_REDUCE_MIN,
                0,
                send,
                recv,
                2,
            ),
            "not defined for the complex dtype c64",
        ),
        (
            call(
                ANYDEV_COLLECTIVE_ALL_REDUCE,
                DType::F32,
                ANYDEV_REDUCE_SUM,
                0,
                send,
                recv,
                9,
            ),
            "outside a 64-byte buffer",
        ),
        (
            call(
                ANYDEV_COLLECTIVE_ALL_GATHER,
                DType::F32,
                0,
                0,
                send,
                Some((on_device_1, 0)),
                4,
            ),
            "recv buffer is on sim:1",
        ),
        // Unknown codes never reach the simulator's code.
        (call(99, DType::F32, 0, 0, send, recv, 1), "unknown collective code 99"),
    ];
    for (c, expected) in &refused {
        let err = api.collective(comm, stream, c).unwrap_err();
        assert_eq!(err.code, ANYDEV_ERROR_INVALID_ARGUMENT, "{}", err.message);
        assert!(err.message.contains(expected), "{expected:?} not in {:?}", err.message);
    }
    let fine = call(
        ANYDEV_COLLECTIVE_ALL_REDUCE,
        DType::F32,
        ANYDEV_REDUCE_SUM,
        0,
        send,
        recv,
        8,
    );
    let err = api.collective(comm, other_stream, &fine).unwrap_err();
    assert!(err.message.contains("the stream is on sim:1"), "{}", err.message);
    // Nothing was enqueued by the refused calls.
    api.synchronize(stream).unwrap();

    for (nranks, rank, expected) in [
        (0, 0, "rank 0 of a communicator of 0"),
        (2, 2, "rank 2 of"),
        (65, 0, "1 to 64"),
    ] {
        let err = api.comm_init(0, &api.comm_id(), nranks, rank, 100).unwrap_err();
        assert_eq!(err.code, ANYDEV_ERROR_INVALID_ARGUMENT, "{}", err.message);
        assert!(err.message.contains(expected), "{expected:?} not in {:?}", err.message);
    }
    let err = api.comm_init(0, &AnydevCommId::default(), 1, 0, 100).unwrap_err();
    assert!(err.message.contains("not made by this simulator"), "{}", err.message);

    for b in [buffer, on_device_1] {
        api.free(b);
    }
    api.destroy_stream(stream);
    api.destroy_stream(other_stream);
    for comm in comms {
        api.destroy(comm.get());
    }
}

#[test]
fn a_communicator_of_one_rank_copies() {
    let api = Api::new();
    world(&api, 1, |me| {
        let mine = f32_bytes(&[1.5, -2.0, 3.25]);
        let got = me.run(
            ANYDEV_COLLECTIVE_ALL_REDUCE,
            DType::F32,
            ANYDEV_REDUCE_PROD,
            0,
            Some(&mine),
            Some(12),
            3,
        );
        assert_eq!(got.unwrap().unwrap(), mine);
        let got = me.run(ANYDEV_COLLECTIVE_ALL_TO_ALL, DType::F32, 0, 0, Some(&mine), Some(12), 3);
        assert_eq!(got.unwrap().unwrap(), mine);
    });
}

#[test]
fn a_rank_that_never_comes_fails_the_join_naming_it() {
    let api = Api::new();
    let id = api.comm_id();
    let path = anydev_sim::comm_path(&id.bytes).unwrap();
    let started = Instant::now();
    let err = api.comm_init(0, &id, 2, 0, 200).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(
        err.message.contains("rank(s) 1 to join") && err.message.contains("never called comm_init"),
        "{}",
        err.message
    );
    assert!(!path.exists(), "a failed join leaves {} behind", path.display());
}

#[test]
fn the_file_the_ranks_meet_in_is_gone_once_all_have_joined() {
    let api = Api::new();
    let id = api.comm_id();
    let path = anydev_sim::comm_path(&id.bytes).unwrap();
    std::thread::scope(|scope| {
        let first = scope.spawn(|| Handle(api.comm_init(0, &id, 2, 0, 60_000).unwrap()));
        // The first rank waits in the file, so it is there until the second joins.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !path.exists() {
            assert!(Instant::now() < deadline, "{} never appeared", path.display());
            std::thread::sleep(Duration::from_millis(1));
        }
        let second = api.comm_init(1, &id, 2, 1, 60_000).unwrap();
        let first = first.join().unwrap();
        assert!(!path.exists(), "{} is left behind", path.display());
        api.destroy(first.0);
        api.destroy(second);
    });
}

#[test]
fn a_rank_joining_twice_fails_everyones_join() {
    let api = Api::new();
    let id = api.comm_id();
    let path = anydev_sim::comm_path(&id.bytes).unwrap();
    std::thread::scope(|scope| {
        let first = scope.spawn(|| api.comm_init(0, &id, 2, 0, 60_000).map(Handle));
        while !path.exists() && !first.is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let err = api.comm_init(1, &id, 2, 0, 60_000).unwrap_err();
        assert!(
            err.message.contains("rank 0 joined the communicator of 2 ranks twice"),
            "{}",
            err.message
        );
        let err = first.join().unwrap().err().unwrap();
        assert!(err.message.contains("twice"), "{}", err.message);
    });
    assert!(!path.exists());
}

/// Runs `f` on its own thread and returns what it returns, failing the
/// test (instead of hanging it) when that takes over a minute.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(Duration::from_secs(60)).expect("it hung")
}

#[test]
fn abort_ends_a_collective_that_a_peer_never_joins() {
    let api = Api::new();
    let joined = join_all(&api, 2);
    let (comm0, comm1) = (joined[0], joined[1]);
    let (stream0, stream1) = (Handle(api.stream(0)), Handle(api.stream(1)));
    let buffer = Handle(api.upload(0, stream0.0, &f32_bytes(&[1.0; 16])));
    let c = Collective {
        kind: ANYDEV_COLLECTIVE_ALL_REDUCE,
        dtype: DType::F32,
        op: ANYDEV_REDUCE_SUM,
        peer: 0,
        send: Some((buffer.0, 0)),
        recv: Some((buffer.0, 32)),
        count: 8,
    };
    // Rank 1 has joined but never makes the call: rank 0 waits for it.
    api.collective(comm0.0, stream0.0, &c).unwrap();
    let aborter = {
        let api = Arc::clone(&api);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            api.abort(comm0.get());
        })
    };
    let waiting = Arc::clone(&api);
    let err = within_a_minute(move || waiting.synchronize(stream0.get())).unwrap_err();
    aborter.join().unwrap();
    assert!(err.message.contains("an enqueued all_reduce failed"), "{}", err.message);
    assert!(err.message.contains("the communicator was aborted"), "{}", err.message);
    // Later collectives fail at once, on this rank and, through the file,
    // on the peer, which learns who aborted.
    api.collective(comm0.0, stream0.0, &c).unwrap();
    assert!(api.synchronize(stream0.0).unwrap_err().message.contains("aborted"));
    let buffer1 = api.upload(1, stream1.0, &f32_bytes(&[1.0; 16]));
    let c1 = Collective {
        send: Some((buffer1, 0)),
        recv: Some((buffer1, 32)),
        ..c
    };
    api.collective(comm1.0, stream1.0, &c1).unwrap();
    let waiting = Arc::clone(&api);
    let err = within_a_minute(move || waiting.synchronize(stream1.get())).unwrap_err();
    assert!(err.message.contains("aborted by rank 0"), "{}", err.message);
    api.free(buffer.0);
    api.free(buffer1);
    for (comm, stream) in [(comm0, stream0), (comm1, stream1)] {
        api.destroy_stream(stream.0);
        api.destroy(comm.0);
    }
}

#[test]
fn a_peer_blocked_in_a_recv_wakes_when_a_rank_aborts() {
    let api = Api::new();
    let joined = join_all(&api, 2);
    let stream1 = Handle(api.stream(1));
    let buffer = api.upload(1, stream1.0, &[0; 16]);
    let recv = Collective {
        kind: ANYDEV_COLLECTIVE_RECV,
        dtype: DType::U8,
        op: 0,
        peer: 0,
        send: None,
        recv: Some((buffer, 0)),
        count: 16,
    };
    // Nothing is ever sent: rank 1 waits until rank 0 aborts.
    api.collective(joined[1].0, stream1.0, &recv).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    api.abort(joined[0].0);
    let waiting = Arc::clone(&api);
    let err = within_a_minute(move || waiting.synchronize(stream1.get())).unwrap_err();
    assert!(err.message.contains("an enqueued recv failed"), "{}", err.message);
    assert!(err.message.contains("aborted by rank 0"), "{}", err.message);
    api.free(buffer);
    api.destroy_stream(stream1.0);
    for comm in joined {
        api.destroy(comm.0);
    }
}

/// The ranks of `ranks_in_separate_processes` that this process plays:
/// set for the children it starts.
const CHILD_RANK: &str = "ANYDEV_SIM_TEST_CHILD_RANK";
const CHILD_ID: &str = "ANYDEV_SIM_TEST_CHILD_ID";

/// One rank of `ranks_in_separate_processes`, joined as `comm`: an
/// all-reduce of more than a chunk and an all-gather, checked against the
/// host.
fn process_rank(api: &Api, comm: *mut AnydevComm, n: usize, r: usize) {
    let me = Rank {
        api,
        rank: r,
        n,
        comm,
        stream: api.stream(r),
    };
    let count = CHUNK_BYTES / 4 + 1000;
    let mine = encode(DType::F32, &data(DType::F32, r, count, 1));
    let got = me
        .run(
            ANYDEV_COLLECTIVE_ALL_REDUCE,
            DType::F32,
            ANYDEV_REDUCE_SUM,
            0,
            Some(&mine),
            Some(4 * count),
            count,
        )
        .unwrap()
        .unwrap();
    let want: Vec<_> = (0..count)
        .map(|i| combine(ANYDEV_REDUCE_SUM, (0..n).map(|p| value(DType::F32, p, i, 1))))
        .collect();
    assert_bytes(
        &got,
        &encode(DType::F32, &want),
        DType::F32,
        "all_reduce across processes",
    );
    let mine = encode(DType::I64, &data(DType::I64, r, 5, 2));
    let got = me
        .run(
            ANYDEV_COLLECTIVE_ALL_GATHER,
            DType::I64,
            0,
            0,
            Some(&mine),
            Some(n * 40),
            5,
        )
        .unwrap()
        .unwrap();
    let want: Vec<_> = (0..n).flat_map(|p| data(DType::I64, p, 5, 2)).collect();
    assert_bytes(
        &got,
        &encode(DType::I64, &want),
        DType::I64,
        "all_gather across processes",
    );
    api.destroy_stream(me.stream);
}

#[test]
fn ranks_in_separate_processes() {
    let n = 3;
    if let (Ok(rank), Ok(hex)) = (std::env::var(CHILD_RANK), std::env::var(CHILD_ID)) {
        let mut id = AnydevCommId::default();
        for (byte, pair) in id.bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
            *byte = u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap();
        }
        let rank: usize = rank.parse().unwrap();
        let api = Api::new();
        let comm = api.comm_init(rank, &id, n as u32, rank as u32, 60_000).unwrap();
        process_rank(&api, comm, n, rank);
        api.destroy(comm);
        return;
    }
    // This process is rank 0; this test binary, run again, the others.
    let api = Api::new();
    let id = api.comm_id();
    let hex: String = id.bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut children: Vec<_> = (1..n)
        .map(|r| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "ranks_in_separate_processes", "--test-threads=1"])
                .env(CHILD_RANK, r.to_string())
                .env(CHILD_ID, &hex)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let comm = Handle(api.comm_init(0, &id, n as u32, 0, 60_000).unwrap());
    // A child that fails aborts this rank's collectives instead of leaving
    // them waiting for it; a failure here ends the children.
    let done = std::sync::atomic::AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        let watchdog = scope.spawn(|| {
            let mut exited = vec![false; children.len()];
            while !done.load(std::sync::atomic::Ordering::Acquire) && !exited.iter().all(|&e| e) {
                for (child, exited) in children.iter_mut().zip(&mut exited) {
                    if let Some(status) = child.try_wait().unwrap() {
                        *exited = true;
                        if !status.success() {
                            api.abort(comm.get());
                            return;
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let outcome = catch_unwind(AssertUnwindSafe(|| process_rank(&api, comm.get(), n, 0)));
        done.store(true, std::sync::atomic::Ordering::Release);
        watchdog.join().unwrap();
        outcome
    });
    let outputs: Vec<_> = children
        .into_iter()
        .map(|mut child| {
            if outcome.is_err() {
                let _ = child.kill();
            }
            child.wait_with_output().unwrap()
        })
        .collect();
    api.destroy(comm.get());
    for out in outputs {
        assert!(
            out.status.success(),
            "a child rank failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The child ran this very test, not nothing.
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    }
    if let Err(panic) = outcome {
        resume_unwind(panic);
    }
}
