//! Which device a rank uses.
//!
//! The local rank (this process's index among the ranks on its node) comes
//! from the launcher: `OMPI_COMM_WORLD_LOCAL_RANK` (Open MPI's mpirun),
//! `SLURM_LOCALID` (srun), `LOCAL_RANK` (torchrun and others), else from
//! MPI's split of the world into node-local groups. The device is
//! `local_rank % count` among the devices of kind `ANYDEV_DIST_KIND`, else
//! of the default device's kind.
//!
//! More ranks on a node than devices is an error unless the kind's devices
//! can be shared: those whose memory is host memory (`cpu`, which reports
//! `host_accessible_memory`). Every other kind, the simulator included, is
//! one rank per device, as on GPUs, so that a run on simulated devices
//! catches the placement mistakes a run on real accelerators would;
//! `ANYDEV_DIST_SHARE_DEVICES=1` allows sharing anyway.

use crate::error::{DistError, Result};
use anydev::{Device, DeviceKind};

pub const LOCAL_RANK_VARS: [&str; 3] = ["OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"];
pub const KIND_VAR: &str = "ANYDEV_DIST_KIND";
pub const SHARE_VAR: &str = "ANYDEV_DIST_SHARE_DEVICES";

/// The local rank the launcher gave this process, and the variable it
/// came from; `None` when no launcher variable is set.
pub fn launcher_local_rank(get: impl Fn(&str) -> Option<String>) -> Result<Option<(usize, &'static str)>> {
    for var in LOCAL_RANK_VARS {
        if let Some(value) = get(var) {
            let rank = value
                .trim()
                .parse()
                .map_err(|_| DistError::Placement(format!("{var}={value:?} is not a non-negative whole number")))?;
            return Ok(Some((rank, var)));
        }
    }
    Ok(None)
}

/// The device for local rank `local_rank` of `local_size` ranks on this
/// node, among `count` devices of `kind`.
pub fn choose(local_rank: usize, local_size: usize, kind: DeviceKind, count: usize, shareable: bool) -> Result<Device> {
    if count == 0 {
        return Err(DistError::Placement(format!(
            "there is no {} device in this process (see `anydev info`; {KIND_VAR} picks the kind)",
            kind.as_str()
        )));
    }
    if local_size > count && !shareable {
        return Err(DistError::Placement(format!(
            "{local_size} ranks on this node but only {count} {} device(s), and {} devices are not shared \
             between ranks; start at most {count} ranks per node, add devices, or set {SHARE_VAR}=1",
            kind.as_str(),
            kind.as_str()
        )));
    }
    Ok(Device::new(kind, local_rank % count))
}

/// Whether `ANYDEV_DIST_SHARE_DEVICES` allows sharing.
pub fn share_override(get: impl Fn(&str) -> Option<String>) -> Result<bool> {
    match get(SHARE_VAR).as_deref().map(str::trim) {
        None | Some("") | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(DistError::Config(format!("{SHARE_VAR}={other:?}: use 0 or 1"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn launcher_variables_in_order() {
        assert_eq!(launcher_local_rank(env(&[])).unwrap(), None);
        assert_eq!(
            launcher_local_rank(env(&[("LOCAL_RANK", "3"), ("SLURM_LOCALID", "1")])).unwrap(),
            Some((1, "SLURM_LOCALID"))
        );
        assert_eq!(
            launcher_local_rank(env(&[("LOCAL_RANK", "2"), ("OMPI_COMM_WORLD_LOCAL_RANK", "0")])).unwrap(),
            Some((0, "OMPI_COMM_WORLD_LOCAL_RANK"))
        );
        let e = launcher_local_rank(env(&[("LOCAL_RANK", "-1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("LOCAL_RANK=\"-1\""), "{e}");
    }

    #[test]
    fn devices_are_dealt_round_robin() {
        let sim = DeviceKind::new("sim");
        let picked: Vec<_> = (0..4).map(|r| choose(r, 4, sim, 4, false).unwrap().index()).collect();
        assert_eq!(picked, [0, 1, 2, 3]);
        let cpu = DeviceKind::new("cpu");
        assert_eq!(choose(3, 4, cpu, 1, true).unwrap(), Device::cpu());
    }

    #[test]
    fn too_many_ranks_for_unshared_devices_is_an_error() {
        let e = choose(2, 4, DeviceKind::new("sim"), 2, false).unwrap_err().to_string();
        assert!(e.contains("4 ranks on this node but only 2 sim device(s)"), "{e}");
        assert!(choose(2, 4, DeviceKind::new("sim"), 2, true).is_ok());
        let e = choose(0, 1, DeviceKind::new("cuda"), 0, false).unwrap_err().to_string();
        assert!(e.contains("no cuda device"), "{e}");
    }

    #[test]
    fn share_override_values() {
        assert!(!share_override(env(&[])).unwrap());
        assert!(share_override(env(&[("ANYDEV_DIST_SHARE_DEVICES", "1")])).unwrap());
        assert!(share_override(env(&[("ANYDEV_DIST_SHARE_DEVICES", "yes")])).is_err());
    }
}
