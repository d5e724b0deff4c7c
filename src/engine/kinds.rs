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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_ends_declare_what_they_need() {
        let b = |k| backend(k).expect("a back end");
        // psync blocks in each call: a thread per outstanding IO; the others keep the depth themselves
        assert_eq!(
            (b(EngineKind::Psync).threads(8), b(EngineKind::IoUring).threads(8), b(EngineKind::Null).threads(8)),
            (8, 1, 1)
        );
        assert!(b(EngineKind::IoUring).needs_file() && b(EngineKind::Psync).needs_file());
        assert!(!b(EngineKind::Null).needs_file());
        assert!(backend(EngineKind::Fio).is_none());
    }
}
