//! What fathom observes besides its own IOs. For now, the environment of a run.

pub mod environment;
