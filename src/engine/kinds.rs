//! The one place an `EngineKind` names its back end.

use super::worker::Backend;
use super::{null, psync, uring};
use crate::scenario::EngineKind;

/// The back end that runs workloads of `kind`; `None` for a workload run by another
/// program (fio, pgbench, iperf3: `crate::drivers`).
pub fn backend(kind: EngineKind) -> Option<&'static dyn Backend> {
    match kind {
        EngineKind::IoUring => Some(&uring::Uring),
        EngineKind::Psync => Some(&psync::Psync),
        EngineKind::Null => Some(&null::Null),
        // run by another program (fio, pgbench, iperf3, ...): `crate::drivers`
        _ => None,
    }
}
