//! A device's own collectives (plugin ABI 1.6, `anydev::collective`):
//! where the device's backend offers them, a communicator of one rank,
//! through which every collective must hand back its input and a
//! malformed call is refused; elsewhere, asking for one is an error that
//! says to move the arrays through host memory. Several ranks take
//! several processes, which `scripts/test-dist.sh` runs under `mpirun`.

use crate::case::{check, check_eq, expect_err, Case, CaseCtx, Failure};
use crate::reference as r;
use anydev::collective::{self, CollectiveKind, CommInit, ReduceOp};
use anydev_array as ad;
use anydev_core::{DType, Error};
use std::time::Duration;

pub fn cases() -> Vec<Case> {
    vec![Case::new("collective::one_rank_returns_its_input", one_rank).dtypes(&[DType::F32, DType::I32])]
}

fn one_rank(ctx: &CaseCtx) -> Result<(), Failure> {
    let (device, dtype) = (ctx.device, ctx.dtype());
    if collective::library(device)?.is_none() {
        let what = format!("a communicator id on {device}, whose backend offers no collectives");
        expect_err(&what, "an error saying so", collective::comm_id(device), |e| {
            e.to_string().contains("offers no collectives")
        })?;
        return Ok(());
    }
    let id = collective::comm_id(device)?;
    let init = CommInit {
        id: &id,
        nranks: 1,
        rank: 0,
        timeout: Duration::from_secs(30),
    };
    let comm = collective::comm_init(device, &init)?;
    check_eq(
        "the communicator's rank, size and device",
        (0, 1, device),
        (comm.rank(), comm.size(), comm.device()),
    )?;
    let values = [3.0, -1.0, 4.0, 1.0, -5.0, 9.0];
    let x = r::array(&values, &[6], dtype, device)?;
    let kinds = [
        CollectiveKind::AllReduce(ReduceOp::Sum),
        CollectiveKind::AllReduce(ReduceOp::Prod),
        CollectiveKind::AllReduce(ReduceOp::Min),
        CollectiveKind::AllReduce(ReduceOp::Max),
        CollectiveKind::Broadcast { root: 0 },
        CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter(ReduceOp::Sum),
        CollectiveKind::AllToAll,
    ];
    for kind in kinds {
        let out = ad::empty(&[6], (dtype, device))?;
        collective::enqueue(comm.as_ref(), kind, Some(&x), Some(&out), 6)?.synchronize()?;
        r::check_array(&format!("{kind:?} of one rank"), &[6], &values, &out)?;
    }
    let empty = ad::empty(&[0], (dtype, device))?;
    let sum = CollectiveKind::AllReduce(ReduceOp::Sum);
    collective::enqueue(comm.as_ref(), sum, Some(&empty), Some(&empty.copy()?), 0)?.synchronize()?;
    let to_self = collective::enqueue(comm.as_ref(), CollectiveKind::Send { peer: 0 }, Some(&x), None, 6);
    let e = expect_err("a send to the only rank", "InvalidArgument", to_self, |e| {
        matches!(e, Error::InvalidArgument { .. })
    })?;
    check(
        e.to_string().contains("not another rank"),
        "the error of a send to the only rank",
        "it says the peer is not another rank",
        e,
    )?;
    let short = ad::empty(&[3], (dtype, device))?;
    let overrun = collective::enqueue(comm.as_ref(), sum, Some(&x), Some(&short), 6);
    expect_err(
        "an all-reduce into too small an array",
        "InvalidArgument",
        overrun,
        |e| e.to_string().contains("outside a buffer"),
    )?;
    Ok(())
}
