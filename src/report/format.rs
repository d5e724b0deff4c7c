//! Numbers for people, as the read side writes them: the helpers live with the
//! measurement types ([`crate::metrics::format`]) so that lint, below the read side,
//! says a figure the way `show` and the report do.

pub use crate::metrics::format::{count, latency_us, rate, rate_in, seconds, sig3};
