//! The metadata every rank sends before a collective's data moves.
//!
//! A fixed-size record, so the exchange itself can never disagree on its
//! size: the call, its sequence number on the communicator, the reduce op,
//! dtype, shape, device kind, the engine the array travels through, root,
//! and whether this rank already failed (with its message). All ranks
//! compare every record with rank 0's in the same order, so all of them
//! return the same error.

use crate::error::DistError;
use crate::Engine;
use anydev::DType;

pub(crate) const RECORD: usize = 512;
pub(crate) const MAX_DIMS: usize = 16;
const MAGIC: &[u8; 4] = b"ADM1";
const KIND_BYTES: usize = 32;
const DIMS_AT: usize = 24 + KIND_BYTES;
const MESSAGE_AT: usize = DIMS_AT + 8 * MAX_DIMS;

/// The calls, as they travel in the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    AllReduce = 1,
    Broadcast = 2,
    AllGather = 3,
    ReduceScatter = 4,
    AllToAll = 5,
    Barrier = 6,
    Split = 7,
    Send = 8,
    Recv = 9,
    Init = 10,
}

impl Call {
    pub fn name(self) -> &'static str {
        match self {
            Call::AllReduce => "all_reduce",
            Call::Broadcast => "broadcast",
            Call::AllGather => "all_gather",
            Call::ReduceScatter => "reduce_scatter",
            Call::AllToAll => "all_to_all",
            Call::Barrier => "barrier",
            Call::Split => "split",
            Call::Send => "send",
            Call::Recv => "recv",
            Call::Init => "init",
        }
    }

    fn from_code(code: u8) -> Option<Call> {
        [
            Call::AllReduce,
            Call::Broadcast,
            Call::AllGather,
            Call::ReduceScatter,
            Call::AllToAll,
            Call::Barrier,
            Call::Split,
            Call::Send,
            Call::Recv,
            Call::Init,
        ]
        .into_iter()
        .find(|c| *c as u8 == code)
    }
}

/// One rank's description of the call it is making.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub call: Call,
    pub seq: u64,
    /// `ReduceOp` code, 0 for calls without one.
    pub reduce: u8,
    pub dtype: Option<DType>,
    pub shape: Option<Vec<usize>>,
    pub kind: String,
    /// The engine this rank routes the array's device through: ranks that
    /// route a kind differently (one set `ANYDEV_DIST_BACKEND` or called
    /// `set_engine`, another did not) would otherwise wait in two
    /// different libraries until the timeout.
    pub engine: Option<Engine>,
    /// Root of a broadcast, -1 where there is none.
    pub root: i32,
    /// Set when this rank failed before the exchange.
    pub error: Option<String>,
}

impl Meta {
    pub fn new(call: Call, seq: u64) -> Meta {
        Meta {
            call,
            seq,
            reduce: 0,
            dtype: None,
            shape: None,
            kind: String::new(),
            engine: None,
            root: -1,
            error: None,
        }
    }

    pub fn encode(&self) -> [u8; RECORD] {
        let mut r = [0u8; RECORD];
        r[0..4].copy_from_slice(MAGIC);
        r[4..12].copy_from_slice(&self.seq.to_le_bytes());
        r[12] = self.call as u8;
        r[13] = self.reduce;
        r[14] = self.dtype.map_or(0, |d| d.code() as u8);
        match &self.shape {
            Some(shape) if shape.len() <= MAX_DIMS => {
                r[15] = shape.len() as u8;
                for (i, d) in shape.iter().enumerate() {
                    r[DIMS_AT + 8 * i..DIMS_AT + 8 * i + 8].copy_from_slice(&(*d as u64).to_le_bytes());
                }
            }
            _ => r[15] = 0xff,
        }
        r[16..20].copy_from_slice(&self.root.to_le_bytes());
        r[20] = u8::from(self.error.is_some());
        r[21] = self.engine.map_or(0, |e| e as u8 + 1);
        put_str(&mut r[24..24 + KIND_BYTES], &self.kind);
        if let Some(message) = &self.error {
            put_str(&mut r[MESSAGE_AT..], message);
        }
        r
    }

    /// The record a peer sent; `None` when it is not one (which only a
    /// peer running other code can cause).
    pub fn decode(r: &[u8]) -> Option<Meta> {
        if r.len() != RECORD || &r[0..4] != MAGIC {
            return None;
        }
        let seq = u64::from_le_bytes(r[4..12].try_into().ok()?);
        let call = Call::from_code(r[12])?;
        let dtype = match r[14] {
            0 => None,
            code => Some(DType::from_code(u32::from(code))?),
        };
        let shape = match r[15] {
            0xff => None,
            n if usize::from(n) <= MAX_DIMS => Some(
                (0..usize::from(n))
                    .map(|i| u64::from_le_bytes(r[DIMS_AT + 8 * i..DIMS_AT + 8 * i + 8].try_into().unwrap()) as usize)
                    .collect(),
            ),
            _ => return None,
        };
        let engine = match r[21] {
            0 => None,
            code => Some(*Engine::ALL.get(usize::from(code) - 1)?),
        };
        Some(Meta {
            call,
            seq,
            reduce: r[13],
            dtype,
            shape,
            kind: get_str(&r[24..24 + KIND_BYTES]),
            engine,
            root: i32::from_le_bytes(r[16..20].try_into().ok()?),
            error: (r[20] != 0).then(|| get_str(&r[MESSAGE_AT..])),
        })
    }
}

fn put_str(out: &mut [u8], s: &str) {
    // Truncate on a character boundary, leaving a terminating zero.
    let mut end = s.len().min(out.len() - 1);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out[..end].copy_from_slice(&s.as_bytes()[..end]);
}

fn get_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// What every rank must agree on beyond the call itself.
#[derive(Clone, Copy)]
pub(crate) struct Agree {
    pub shape: bool,
}

/// Checks the records of all ranks (index = rank) against rank 0's and
/// returns the error every rank reports, naming the rank that differs.
/// `me` is this rank: its own failure is returned by the caller as is.
pub(crate) fn compare(records: &[Meta], agree: Agree, reduce_name: fn(u8) -> String) -> Result<(), DistError> {
    let first = &records[0];
    let op = first.call.name().to_owned();
    let seq = first.seq;
    // A rank's own failure comes first: it explains the rest.
    if let Some((rank, m)) = records.iter().enumerate().find(|(_, m)| m.error.is_some()) {
        return Err(DistError::PeerFailed {
            op: m.call.name().to_owned(),
            seq: m.seq,
            rank,
            message: m.error.clone().unwrap_or_default(),
        });
    }
    for (rank, m) in records.iter().enumerate().skip(1) {
        let mismatch = |field: &'static str, found: String, expected: String| DistError::Mismatch {
            op: op.clone(),
            seq,
            rank,
            reference: 0,
            field,
            found,
            expected,
        };
        if m.call != first.call {
            return Err(mismatch("call", m.call.name().into(), first.call.name().into()));
        }
        if m.seq != first.seq {
            return Err(mismatch(
                "collective number",
                format!("#{}", m.seq),
                format!("#{}", first.seq),
            ));
        }
        if m.reduce != first.reduce {
            return Err(mismatch("reduce op", reduce_name(m.reduce), reduce_name(first.reduce)));
        }
        if m.root != first.root {
            return Err(mismatch("root", m.root.to_string(), first.root.to_string()));
        }
        if m.kind != first.kind {
            return Err(mismatch("device kind", m.kind.clone(), first.kind.clone()));
        }
        if m.engine != first.engine {
            let show = |e: Option<Engine>| e.map_or("none", Engine::name).to_owned();
            return Err(mismatch("engine", show(m.engine), show(first.engine)));
        }
        if m.dtype != first.dtype {
            let show = |d: Option<DType>| d.map_or("none".into(), |d| d.to_string());
            return Err(mismatch("dtype", show(m.dtype), show(first.dtype)));
        }
        if agree.shape && m.shape != first.shape {
            let show = |s: &Option<Vec<usize>>| s.as_ref().map_or("(more than 16 dims)".into(), |s| format!("{s:?}"));
            return Err(mismatch("shape", show(&m.shape), show(&first.shape)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(shape: &[usize]) -> Meta {
        Meta {
            dtype: Some(DType::F32),
            shape: Some(shape.to_vec()),
            kind: "sim".into(),
            engine: Some(Engine::Plugin),
            reduce: 1,
            ..Meta::new(Call::AllReduce, 7)
        }
    }

    fn name(code: u8) -> String {
        format!("op{code}")
    }

    #[test]
    fn records_round_trip() {
        let mut m = meta(&[3, 0, 5]);
        m.root = 2;
        m.error = Some("déjà vu: ".repeat(80));
        let back = Meta::decode(&m.encode()).unwrap();
        assert_eq!(back.call, m.call);
        assert_eq!(back.shape, m.shape);
        assert_eq!(back.root, 2);
        assert_eq!(back.engine, Some(Engine::Plugin));
        let message = back.error.unwrap();
        assert!(
            m.error.unwrap().starts_with(&message) && message.len() > 300,
            "truncated on a char boundary"
        );
        assert!(Meta::decode(&[0u8; RECORD]).is_none());
        let mut big = meta(&[1; MAX_DIMS + 1]);
        big.error = None;
        assert_eq!(Meta::decode(&big.encode()).unwrap().shape, None);
    }

    #[test]
    fn a_differing_rank_is_named() {
        let records = vec![meta(&[4]), meta(&[4]), meta(&[5]), meta(&[4])];
        let e = compare(&records, Agree { shape: true }, name).unwrap_err().to_string();
        assert!(e.contains("rank 2 has shape [5] but rank 0 has [4]"), "{e}");
        assert!(compare(&records, Agree { shape: false }, name).is_ok());

        let mut other = records.clone();
        other[3].dtype = Some(DType::F64);
        let e = compare(&other, Agree { shape: false }, name).unwrap_err().to_string();
        assert!(e.contains("rank 3 has dtype f64 but rank 0 has f32"), "{e}");

        let mut engine = records.clone();
        engine[2].engine = Some(Engine::Mpi);
        let e = compare(&engine, Agree { shape: true }, name).unwrap_err().to_string();
        assert!(e.contains("rank 2 has engine mpi but rank 0 has plugin"), "{e}");

        let mut call = records.clone();
        call[1] = Meta::new(Call::Barrier, 7);
        let e = compare(&call, Agree { shape: true }, name).unwrap_err().to_string();
        assert!(e.contains("rank 1 has call barrier but rank 0 has all_reduce"), "{e}");
    }

    #[test]
    fn a_failed_rank_is_reported_with_its_message() {
        let mut records = vec![meta(&[4]), meta(&[4]), meta(&[9])];
        records[1].error = Some("out of memory on sim:1".into());
        let e = compare(&records, Agree { shape: true }, name).unwrap_err().to_string();
        assert!(e.contains("rank 1 failed: out of memory on sim:1"), "{e}");
    }
}
